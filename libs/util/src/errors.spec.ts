import { createError, DbproxyError, registeredErrors } from './errors';

describe('createError', () => {
  it('formats the message from the template and keeps the code', () => {
    const TooBig = createError<[string, number]>('DBP_ERR_TEST_TOO_BIG', 'frame %s exceeds %d bytes');
    const err = TooBig('packet', 16);
    expect(err).toBeInstanceOf(DbproxyError);
    expect(err.code).toBe('DBP_ERR_TEST_TOO_BIG');
    expect(err.message).toBe('frame packet exceeds 16 bytes');
    expect(TooBig.is(err)).toBe(true);
    expect(registeredErrors().get('DBP_ERR_TEST_TOO_BIG')).toBe('frame %s exceeds %d bytes');
  });

  it('refuses to define a code twice', () => {
    createError('DBP_ERR_TEST_ONCE', 'once');
    expect(() => createError('DBP_ERR_TEST_ONCE', 'twice')).toThrow(/defined twice/);
  });

  it('refuses codes outside the DBP_ERR_ namespace', () => {
    expect(() => createError('E_BAD', 'x')).toThrow(/invalid error code/);
  });

  it('attaches a cause', () => {
    const Wrapped = createError<[string]>('DBP_ERR_TEST_WRAPPED', 'failed: %s');
    const cause = new Error('inner');
    expect(Wrapped.withCause(cause, 'x').cause).toBe(cause);
  });
});
