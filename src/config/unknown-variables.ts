import { nearestName } from '../common/nearest-name.js';
import type { ConfigIssue } from '../errors.js';
import { VARIABLES } from './env.js';

/** The test hook's variable (see `compose/rotation-deps.ts`): read, so never unknown. */
const TEST_HOOK = 'ROTATOR_TEST_FAILPOINT';

/** Every `ROTATOR_*` name the rotator reads: each variable and the `_FILE` it may be read from. */
const KNOWN: readonly string[] = [...VARIABLES.flatMap((name) => [name, `${name}_FILE`]), TEST_HOOK];

export interface UnknownVariable {
  name: string;
  /** Where it was set: `the environment`, or the dotenv file as given. */
  where: string;
  /** The known name it most likely meant, if one is close. */
  meant?: string;
  /** The warning: what was ignored, and the known name it most likely meant. */
  message: string;
}

/**
 * Kubernetes' service links: a Service named `rotator` (or `rotator-metrics`) in the pod's namespace
 * puts `ROTATOR_SERVICE_HOST`, `ROTATOR_PORT`, `ROTATOR_PORT_9464_TCP_ADDR`… in every container's
 * environment. Told by the `_SERVICE_HOST` each such Service sets, so a typo ending in `_PORT`
 * without one is still warned about.
 */
function serviceLinks(environment: readonly string[]): (name: string) => boolean {
  const services = environment.filter((name) => name.endsWith('_SERVICE_HOST')).map((name) => name.slice(0, -'_SERVICE_HOST'.length));
  return (name) => services.some((service) => name.startsWith(`${service}_SERVICE_`) || name.startsWith(`${service}_PORT`));
}

/**
 * The `ROTATOR_*` variables set that nothing reads: a typo (`ROTATOR_STATE_BACKED`) otherwise runs
 * silently with the default. A name the policy takes a value from (`urlFrom: ROTATOR_SLACK_WEBHOOK`)
 * is read, so not among them, nor is the `_FILE` of one.
 */
export function unknownRotatorVariables(
  set: { environment: Iterable<string>; dotenv?: { file: string; names: Iterable<string> } },
  referenced: ReadonlySet<string>,
): UnknownVariable[] {
  const environment = [...set.environment];
  const links = serviceLinks(environment);
  const read = (name: string) => KNOWN.includes(name) || referenced.has(name) || referenced.has(name.replace(/_FILE$/, ''));
  const seen = new Set<string>();
  const unknown = (names: Iterable<string>, where: string): UnknownVariable[] =>
    [...names]
      .filter((name) => name.startsWith('ROTATOR_') && !read(name) && !seen.has(name))
      .sort()
      .map((name) => {
        seen.add(name);
        const meant = nearestName(name, KNOWN);
        return {
          name,
          where,
          ...(meant !== undefined ? { meant } : {}),
          message: `${name} (set in ${where}) is not a variable token-rotator reads, so it is ignored${meant ? `; did you mean ${meant}?` : ''}`,
        };
      });
  return [
    ...unknown(
      environment.filter((name) => !links(name)),
      'the environment',
    ),
    ...(set.dotenv ? unknown(set.dotenv.names, set.dotenv.file) : []),
  ];
}

/**
 * A refused environment's problems, each about a variable an unknown one most likely meant with
 * that one named: `env.ROTATOR_API_URL: required` is fixed by the typo `ROTATOR_API_UR` beside it.
 */
export function withTypoHints(issues: readonly ConfigIssue[], unknown: readonly UnknownVariable[]): ConfigIssue[] {
  return issues.map((issue) => {
    // `env.NAME: ...`, or `env: ...` naming the variables it lacks (no credentials).
    const about = (name: string) => issue.path === `env.${name}` || (issue.path === 'env' && issue.message.includes(name));
    const typos = unknown.filter((u) => u.meant !== undefined && about(u.meant));
    if (typos.length === 0) return issue;
    return {
      ...issue,
      message: `${issue.message}; ${typos.map((u) => `${u.name} is set (in ${u.where}): a typo of ${u.meant}?`).join('; ')}`,
    };
  });
}
