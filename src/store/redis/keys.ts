/**
 * Redis key layout. Keys of one context share a hash tag ({...}) so a Lua script may touch both on a
 * Redis Cluster too. Ids are written as given: they are validated (length, characters) at the API edge.
 *
 *   <prefix>ctx:{<id>}      hash   createdAt, updatedAt, total
 *   <prefix>ctx:{<id>}:m    list   msgpack messages, oldest first, at most SENTIO_CONTEXT_MAX_MESSAGES
 *   <prefix>ctx:{<id>}:o:<token>  string  marks an append made under an idempotency token (lives as contexts do)
 *   <prefix><bucket>        hash   tokens, at (rate-limit bucket; bucket = "rl:<key id>")
 *   <prefix><scope>         string msgpack idempotency record (scope = "idem:<key id>:<Idempotency-Key>")
 */
export function contextKeys(prefix: string, contextId: string): { meta: string; messages: string } {
  const meta = `${prefix}ctx:{${contextId}}`;
  return { meta, messages: `${meta}:m` };
}

/** A SCAN pattern matching every context's meta key, with the prefix's glob characters escaped. */
export function contextMetaPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}ctx:{*}`;
}

/** The marker of an append made under an idempotency token; a key is named (cluster slot) even without one. */
export function onceKey(meta: string, once: string | undefined): string {
  return `${meta}:o:${once ?? ''}`;
}
