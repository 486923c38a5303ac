/**
 * Node options for worker threads started from the TypeScript sources (the tests run src/, not dist/): the
 * suite's loader, ts-loader.mjs, which maps `./x.js` to `./x.ts` and strips types.
 */
export const TS_LOADER = ['--import', new URL('./ts-loader.mjs', import.meta.url).href];
