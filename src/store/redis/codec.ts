/**
 * Encoding of state kept in Redis: plain MessagePack (msgpackr). Record structures (msgpackr's default
 * extension) are off because they need a structure table that every instance would have to share; plain
 * maps decode the same on any instance and any version of this codec.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

export function encode(value: unknown): Buffer {
  return packr.pack(value);
}

export function decode<T>(bytes: Buffer): T {
  return packr.unpack(bytes) as T;
}
