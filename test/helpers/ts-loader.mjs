// Lets worker threads started by tests run the TypeScript sources (src/scale/http-worker.ts and what it
// imports): `--import ./test/helpers/ts-loader.mjs` registers hooks that map `./x.js` to `./x.ts` when
// only the .ts exists and strip types with TypeScript's transpileModule. Tests only; the build runs dist/.
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
