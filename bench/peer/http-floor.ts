/**
 * The HTTP floor: uWebSockets.js reading each request's body and answering with a fixed reply of the size
 * and headers of Sentio's V2 single-message answer, and nothing else (no JSON, no key, no model). What
 * the load generator and HTTP alone cost on this machine; with the raw engine it bounds what any server
 * of this model could reach here (bench/load.ts: ceiling).
 * Run: node dist/bench/peer/http-floor.js PORT
 */
import uWS from 'uWebSockets.js';

const port = Number(process.argv[2] ?? 0);
// A V2 answer as Sentio gives it for one short message (450 bytes).
const REPLY = JSON.stringify({
  object: 'emotions.analysis', model: 'emotion-v2',
  emotions: {
    _default: {
      category: 'joy', text: 'i feel so happy today',
      raw: { fear: 0.020741702362400433, sadness: 0.02575605329907258, joy: 0.8955728945477542, anger: 0.01736087455516306, love: 0.019116203508746835, surprise: 0.02145227172686289 },
      intensity: 0.6898, intensityLevel: 'high', valence: 0.4131, arousal: 0.5437, complexity: 'simple', wonderIndex: 0.0668, discoveryLevel: 'routine',
    },
  },
});
let served = 0;

const app = uWS.App().post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    const id = `req_${(served++).toString(16).padStart(24, '0')}`;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').writeHeader('x-request-id', id);
      res.writeHeader('x-inference-time', '1.000').writeHeader('ratelimit-limit', '600');
      res.writeHeader('ratelimit-remaining', '599').writeHeader('ratelimit-reset', '1').end(REPLY);
    });
  });
}).any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) throw new Error(`cannot listen on ${port}`);
  console.log(JSON.stringify({ msg: 'floor listening', port: uWS.us_socket_local_port(socket) }));
});
process.on('SIGTERM', () => process.exit(0));
