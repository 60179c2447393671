// Read-only data-directory templates (initdb, mariadb-install-db), built once per machine and copied per instance.
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMP_PREFIX, tmpDir } from './temp-dir';

/** Bump when a template's contents change in a way its fingerprint would not notice. */
const TEMPLATE_FORMAT = 1;

/** Where templates live: one directory per kind and fingerprint, never written after it appears. */
export function templatesRoot(): string {
  return join(tmpdir(), `${TEMP_PREFIX}templates`);
}

/** A fingerprint of an installed binary: a package upgrade changes its size or mtime. */
export function binaryFingerprint(path: string): string {
  const stat = statSync(path);
  return `${path}:${stat.size}:${Math.round(stat.mtimeMs)}`;
}

const building = new Map<string, Promise<string>>();

/**
 * The path of the template `<kind>-<hash(fingerprint)>`, building it first when missing. `build`
 * fills a fresh staging directory; the finished directory is renamed into place in one step, so
 * a reader sees either nothing or a complete template. Two processes racing both build, one wins.
 * Outdated templates are left alone: another checkout on the machine may still be copying one.
 */
export function cachedTemplate(kind: string, fingerprint: string, build: (dir: string) => Promise<void>): Promise<string> {
  const hash = createHash('sha256').update(`${TEMPLATE_FORMAT}\n${fingerprint}`).digest('hex').slice(0, 16);
  const finalPath = join(templatesRoot(), `${kind}-${hash}`);
  let pending = building.get(finalPath);
  if (!pending) {
    pending = existsSync(finalPath) ? Promise.resolve(finalPath) : buildTemplate(finalPath, kind, build);
    building.set(finalPath, pending);
    pending.catch(() => building.delete(finalPath));
  }
  return pending;
}

async function buildTemplate(finalPath: string, kind: string, build: (dir: string) => Promise<void>): Promise<string> {
  await mkdir(templatesRoot(), { recursive: true });
  await chmod(templatesRoot(), 0o755);
  const staging = await tmpDir(`${kind}-template`);
  try {
    const contents = join(staging.path, 'template');
    await mkdir(contents);
    await chmod(contents, 0o755);
    await build(contents);
    try {
      await rename(contents, finalPath);
    } catch (err) {
      if (!existsSync(finalPath)) throw err;
    }
    return finalPath;
  } finally {
    await staging.remove();
  }
}
