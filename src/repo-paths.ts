/** Files that ship with the repository (the built addon, the crisis model), found from the running code. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Where `parts` would be: src/ (tests) and dist/src/ (built) both sit below the repository root. */
export function repoPathCandidates(...parts: string[]): string[] {
  return [join(here, '..', ...parts), join(here, '..', '..', ...parts)];
}
