/** V1 wire dialect: `analyse` spellings, `external_id`, emotions.analyse / emotions.batch_analyse. */
import type { Dialect } from '../emotion-protocol.js';
import { V1EmotionRequest } from '../schemas.js';

export const v1Dialect: Dialect = {
  version: 'v1',
  paths: {
    stateless: '/v1/emotions/analyse',
    context: '/v1/emotions/:context_id/analyse',
    state: '/v1/emotions/:context_id',
    message: '/v1/emotions/:context_id/message/:external_id',
    batch: '/v1/emotions/batch-analyse',
  },
  objects: { analysis: 'emotions.analyse', batch: 'emotions.batch_analyse' },
  schema: V1EmotionRequest,
  externalIdField: 'external_id',
  externalIdOf: (m) => ('external_id' in m ? m.external_id : undefined),
};
