/**
 * The peer baseline: the model served the way a typical Node user would write it. node:http, JSON body,
 * JS tokenization and onnxruntime-node's JS API, one inference call per request, no batching.
 * Run: node dist/bench/peer/server.js PORT
 */
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { OrtJsScorer } from './ort-scorer.js';

const port = Number(process.argv[2] ?? 0);
// Intra-op threads = CPUs, what a Node user typically sets (as bench/engine.ts's peer).
const scorer = await OrtJsScorer.load(process.env['SENTIO_MODEL_DIR'] ?? 'models/emotion', availableParallelism());

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: { content: { text: string } }[] };
        const [s] = await scorer.analyze([body.messages[0]!.content.text]);
        const raw: Record<string, number> = {};
        scorer.labels.emotions.forEach((label, i) => (raw[label] = s!.emotions[i]!));
        const category = Object.entries(raw).sort((a, b) => b[1] - a[1])[0]![0];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ emotions: { _default: { category, raw, valence: s!.valence, arousal: s!.arousal } } }));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      }
    })();
  });
});
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  console.log(JSON.stringify({ msg: 'peer listening', port: typeof addr === 'object' && addr ? addr.port : port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
