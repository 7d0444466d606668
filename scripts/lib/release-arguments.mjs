// The arguments of `npm run release:artifacts`, checked before anything is rendered. A pure
// function: every problem named, the script exits 2 with them.
import semver from 'semver';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * @param {{ version: string | undefined, digest: string | undefined, packageVersion: string }} given
 * @returns {string[]}
 */
export function releaseArgumentProblems({ version, digest, packageVersion }) {
  const problems = [];
  if (version === undefined) problems.push('VERSION is required: npm run release:artifacts -- VERSION [--digest sha256:...] [--out DIR]');
  else if (semver.valid(version) !== version)
    problems.push(
      `VERSION ${JSON.stringify(version)} is not a semantic version such as 1.2.3${/^v\d/.test(version) ? ' (give it without the v)' : ''}`,
    );
  // The image tag, the SBOM's root component and the overlays' own tag (the remote-base install)
  // all say this version; rendering another would label this checkout's content with it.
  else if (version !== packageVersion)
    problems.push(`VERSION ${version} is not this checkout's version ${packageVersion} (package.json "version"); bump it first`);
  if (digest !== undefined && !DIGEST.test(digest))
    problems.push(`--digest ${JSON.stringify(digest)} is not sha256: followed by 64 lowercase hex digits (the image's manifest digest)`);
  return problems;
}
