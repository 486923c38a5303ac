/** V2 wire dialect: `analysis` spellings, `externalId`, emotions.analysis / emotions.batch_analysis. */
import type { Dialect } from '../emotion-protocol.js';
import { V2EmotionRequest } from '../schemas.js';

export const v2Dialect: Dialect = {
  version: 'v2',
  paths: {
    stateless: '/v2/emotions/analysis',
    context: '/v2/emotions/:contextId/analysis',
    state: '/v2/emotions/:contextId',
    message: '/v2/emotions/:contextId/message/:messageId',
    batch: '/v2/emotions/batch-analysis',
  },
  objects: { analysis: 'emotions.analysis', batch: 'emotions.batch_analysis' },
  schema: V2EmotionRequest,
  externalIdField: 'externalId',
  externalIdOf: (m) => ('externalId' in m ? m.externalId : undefined),
};
