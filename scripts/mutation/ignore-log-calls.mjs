// A Stryker ignorer: mutants inside a log call (`log.warn(...)`, `ctx.log.error(...)`,
// `deps.logger.info(...)`) change what is logged, never what the rotator does; the redaction and
// leak tests pin down what logs may contain, not their wording. The same holds for code whose only
// effect is logging: an `if` without `else`, or a `for…of`, whose body only logs, and a callback
// whose body is a log call (`.catch((error) => log.warn(...))`). Configured in stryker.config.mjs.
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

/** A statement, block or expression that does nothing but log. */
function onlyLogs(node) {
  if (!node) return false;
  if (node.type === 'BlockStatement') return node.body.length > 0 && node.body.every(onlyLogs);
  const call = node.type === 'ExpressionStatement' ? node.expression : node;
  const unwrapped = call?.type === 'AwaitExpression' ? call.argument : call;
  return Boolean(unwrapped) && isLogCall(unwrapped);
}

function logsOnly(node) {
  switch (node.type) {
    case 'IfStatement':
      return !node.alternate && onlyLogs(node.consequent);
    case 'ForOfStatement':
      return onlyLogs(node.body);
    case 'ArrowFunctionExpression':
      return onlyLogs(node.body);
    default:
      return onlyLogs(node);
  }
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'log-calls', {
    shouldIgnore(path) {
      return logsOnly(path.node) ? 'a log call: its wording is not behaviour' : undefined;
    },
  }),
];
