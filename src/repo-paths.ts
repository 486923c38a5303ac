/** Files that ship with the repository (the built addon, the crisis model), found from the running code. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Where `parts` would be: src/ (tests) and dist/src/ (built) both sit below the repository root. */
export function repoPathCandidates(...parts: string[]): string[] {
  return [join(here, '..', ...parts), join(here, '..', '..', ...parts)];
}

/**
 * The model that ships with the code: models/emotion of this checkout, wherever the process was started
 * from (a service manager's working directory is seldom the checkout). A path the operator sets is
 * theirs, relative to the working directory as usual.
 */
export function shippedModelDir(): string {
  return repoPathCandidates('models', 'emotion').find((d) => existsSync(join(d, 'model.onnx'))) ?? 'models/emotion';
}
