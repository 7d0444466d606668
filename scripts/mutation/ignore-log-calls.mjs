// A Stryker ignorer: mutants inside a log call (`log.warn(...)`, `ctx.log.error(...)`,
// `deps.logger.info(...)`) change what is logged, never what the rotator does; the redaction and
// leak tests pin down what logs may contain, not their wording. Configured in stryker.config.mjs.
import { declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const LOGGERS = new Set(['log', 'logger']);

function loggerName(node) {
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier') {
    return node.property.name;
  }
  return undefined;
}

function isLogCall(node) {
  if (node.type !== 'CallExpression') return false;
  const callee = node.callee;
  if (callee.type !== 'MemberExpression' && callee.type !== 'OptionalMemberExpression') return false;
  if (callee.computed || callee.property.type !== 'Identifier') return false;
  return LEVELS.has(callee.property.name) && LOGGERS.has(loggerName(callee.object) ?? '');
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'log-calls', {
    shouldIgnore(path) {
      const node = path.node;
      const call = node.type === 'ExpressionStatement' ? node.expression : node;
      const unwrapped = call?.type === 'AwaitExpression' ? call.argument : call;
      return unwrapped && isLogCall(unwrapped) ? 'a log call: its wording is not behaviour' : undefined;
    },
  }),
];
