import { createMd5Salt, isMd5StoredPassword, md5PasswordResponse, md5ResponseFromStored, md5StoredPassword, verifyMd5Response } from './md5';

// What PostgreSQL 15 stored for `SET password_encryption = 'md5'; CREATE ROLE dbp_md5_probe PASSWORD 'wonderland'`.
const STORED_BY_POSTGRES = 'md5557fea25190d37a5a8e0c0f4543cb04a';
const salt = Buffer.from([0x01, 0x02, 0x03, 0x04]);

describe('md5 authentication', () => {
  it('computes the hash PostgreSQL stores', () => {
    expect(md5StoredPassword('dbp_md5_probe', 'wonderland')).toBe(STORED_BY_POSTGRES);
    expect(isMd5StoredPassword(STORED_BY_POSTGRES)).toBe(true);
    expect(isMd5StoredPassword('wonderland')).toBe(false);
  });

  it('answers a salt from the password or from the stored hash alike', () => {
    const response = md5PasswordResponse('dbp_md5_probe', 'wonderland', salt);
    expect(response).toMatch(/^md5[0-9a-f]{32}$/);
    expect(md5ResponseFromStored(STORED_BY_POSTGRES, salt)).toBe(response);
    expect(md5PasswordResponse('dbp_md5_probe', 'wonderland', Buffer.from([4, 3, 2, 1]))).not.toBe(response);
  });

  it('verifies against a plaintext or a stored secret, and rejects a wrong password', () => {
    const response = md5PasswordResponse('alice', 'secret', salt);
    expect(verifyMd5Response({ user: 'alice', secret: 'secret' }, salt, response)).toBe(true);
    expect(verifyMd5Response({ user: 'alice', secret: md5StoredPassword('alice', 'secret') }, salt, response)).toBe(true);
    expect(verifyMd5Response({ user: 'alice', secret: 'Secret' }, salt, response)).toBe(false);
    expect(verifyMd5Response({ user: 'bob', secret: 'secret' }, salt, response)).toBe(false);
    expect(verifyMd5Response({ user: 'alice', secret: 'secret' }, salt, 'md5short')).toBe(false);
  });

  it('uses the injected random source for salts and checks salt sizes', () => {
    expect(createMd5Salt(() => Buffer.from([9, 9, 9, 9]))).toEqual(Buffer.from([9, 9, 9, 9]));
    expect(() => createMd5Salt(() => Buffer.alloc(3))).toThrow(expect.objectContaining({ code: 'DBP_ERR_PG_MD5_INVALID' }));
    expect(() => md5ResponseFromStored('md5nothex', salt)).toThrow(expect.objectContaining({ code: 'DBP_ERR_PG_MD5_INVALID' }));
  });
});
