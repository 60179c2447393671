import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import { BackendDecoder } from './backend/decoder';
import { encodeBackendMessages } from './backend/codec';
import { encodeFrontendMessages } from './frontend/codec';
import { FrontendDecoder } from './frontend/decoder';
import type { AuthResponseKind } from './frontend/messages';
import { backendMessageArb, frontendMessageArb, startupMessageArb } from './testing';

jest.setTimeout(60_000);

/** Feeds chunks; the decoder may emit or throw a typed DBP_ERR_PG_* error, nothing else, and must return. */
function survives(push: (chunk: Buffer) => void, chunks: readonly Buffer[]): void {
  try {
    for (const chunk of chunks) push(chunk);
  } catch (err) {
    if (!(err instanceof DbproxyError) || !err.code.startsWith('DBP_ERR_PG_')) throw err;
  }
}

const chunksArb = fc.array(fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)), { maxLength: 8 });
const authArb = fc.constantFrom<AuthResponseKind>('password', 'sasl-initial', 'sasl');

/** A valid stream with bytes flipped, removed or inserted. */
function mutated(bytes: Buffer, edits: [number, number, number][]): Buffer {
  let out = Buffer.from(bytes);
  for (const [kind, at, value] of edits) {
    const i = out.length === 0 ? 0 : at % out.length;
    if (kind === 0) out[i] = value;
    else if (kind === 1) out = Buffer.concat([out.subarray(0, i), out.subarray(i + 1)]);
    else out = Buffer.concat([out.subarray(0, i), Buffer.from([value]), out.subarray(i)]);
  }
  return out;
}
const editsArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 });

describe('decoders on hostile input (fuzz)', () => {
  it('frontend decoder, startup phase, random bytes', () => {
    fc.assert(
      fc.property(chunksArb, authArb, (chunks, auth) => {
        const decoder = new FrontendDecoder({ maxMessageSize: 4096 });
        decoder.expectAuthResponse(auth);
        survives((c) => decoder.push(c, () => undefined), chunks);
        expect(decoder.buffered).toBeLessThanOrEqual(10000);
      }),
      { numRuns: 1500 },
    );
  });

  it('frontend decoder, typed phase, random bytes after a valid startup', () => {
    const startup = encodeFrontendMessages({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map([['user', 'u']]) });
    fc.assert(
      fc.property(chunksArb, authArb, (chunks, auth) => {
        const decoder = new FrontendDecoder({ maxMessageSize: 4096 });
        decoder.push(startup, () => decoder.expectAuthResponse(auth));
        survives((c) => decoder.push(c, () => undefined), chunks);
        expect(decoder.buffered).toBeLessThanOrEqual(4096);
      }),
      { numRuns: 1500 },
    );
  });

  it('frontend decoder, mutated valid streams', () => {
    fc.assert(
      fc.property(startupMessageArb, fc.array(frontendMessageArb, { maxLength: 6 }), editsArb, authArb, (startup, samples, edits, auth) => {
        const bytes = mutated(encodeFrontendMessages(startup, ...samples.map((s) => s.message)), edits);
        const decoder = new FrontendDecoder();
        decoder.expectAuthResponse(auth);
        survives((c) => decoder.push(c, () => undefined), [bytes]);
      }),
      { numRuns: 1500 },
    );
  });

  it('backend decoder, random bytes and mutated valid streams', () => {
    fc.assert(
      fc.property(chunksArb, fc.array(backendMessageArb, { maxLength: 6 }), editsArb, fc.boolean(), (chunks, messages, edits, ssl) => {
        const random = new BackendDecoder({ maxMessageSize: 4096 });
        if (ssl) random.expectEncryptionResponse();
        survives((c) => random.push(c, () => undefined), chunks);
        expect(random.buffered).toBeLessThanOrEqual(4096);
        const decoder = new BackendDecoder();
        survives((c) => decoder.push(c, () => undefined), [mutated(encodeBackendMessages(...messages), edits)]);
      }),
      { numRuns: 1500 },
    );
  });
});
