/** Raw HTTP/1.1 over a socket, for requests fetch will not send (lying Content-Length, half bodies). */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** A response's status line and headers (names lower-cased), from the text before the blank line. */
export function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers };
}

/** Send `request` bytes; resolve with the first response, or with status 0 if the server just closes. */
export function rawRequest(port: number, request: string | Buffer, opts: { endAfterWrite?: boolean; timeoutMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let closed = false;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('raw request timed out'));
    }, opts.timeoutMs ?? 10_000);
    const finish = () => {
      clearTimeout(timer);
      const text = data.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        resolve({ status: 0, headers: {}, body: text, closed });
        return;
      }
      resolve({ ...parseHead(text.slice(0, headEnd)), body: text.slice(headEnd + 4), closed });
    };
    sock.on('data', (d) => {
      data = Buffer.concat([data, d]);
      const text = data.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        const m = /content-length:\s*(\d+)/i.exec(text.slice(0, headEnd));
        if (m && data.length >= Buffer.byteLength(text.slice(0, headEnd + 4)) + Number(m[1])) {
          sock.destroy();
          finish();
        }
      }
    });
    sock.on('close', () => {
      closed = true;
      finish();
    });
    sock.on('error', () => undefined);
    sock.write(request);
    if (opts.endAfterWrite) sock.end();
  });
}

export function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  const head = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${b.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), b]);
}
