import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { describe, expect, expectTypeOf, it } from 'vitest';

import * as errors from '../../src/errors.js';
import {
  ConfigError,
  ERROR_CLASSES,
  type ErrorCode,
  RotatorError,
  type RotatorErrorCode,
  SinkError,
  UNEXPECTED_ERROR_CODE,
} from '../../src/errors.js';
import { errorSummary } from '../../src/rotation/outcome.js';

const classes = Object.entries(ERROR_CLASSES);
const outputSchema = JSON.parse(await readFile(resolve(import.meta.dirname, '../../schema/output.schema.json'), 'utf8')) as {
  $defs: { Error: { properties: { code: { enum: string[] } } } };
};

/** An instance of any of our classes: ConfigError takes issues; the others a message, and ApiError's family an operation. */
function instanceOf(ErrorClass: (typeof ERROR_CLASSES)[RotatorErrorCode]): RotatorError {
  if (ErrorClass === ConfigError) return new ConfigError([{ path: 'tokens[0].id', message: 'is required' }]);
  const Constructor = ErrorClass as unknown as new (message: string, details: { op: 'retrieve' }) => RotatorError;
  return new Constructor('it failed', { op: 'retrieve' });
}

describe('every error of ours carries one stable code', () => {
  it('on the class and on each instance, the same as the key it is listed under', () => {
    for (const [code, ErrorClass] of classes) {
      expect(ErrorClass.code, ErrorClass.name).toBe(code);
      expect(instanceOf(ErrorClass).code, ErrorClass.name).toBe(code);
    }
  });

  it('a code no other class carries', () => {
    const codes = classes.map(([, ErrorClass]) => ErrorClass.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('from a class listed in ERROR_CLASSES, for every error class errors.ts exports', () => {
    const exported = Object.values(errors).filter((value) => typeof value === 'function' && value.prototype instanceof Error);
    expect(new Set(Object.values(ERROR_CLASSES))).toEqual(new Set(exported));
  });

  it('typed as its literal, so that a misspelt or a forgotten code does not type-check', () => {
    expectTypeOf<RotatorErrorCode>().toEqualTypeOf<
      | 'ERR_ROTATOR'
      | 'ERR_CONFIG'
      | 'ERR_AUTH'
      | 'ERR_API'
      | 'ERR_REGENERATE_OUTCOME_UNKNOWN'
      | 'ERR_REGENERATE_ANSWER_UNUSABLE'
      | 'ERR_API_RESPONSE'
      | 'ERR_SINK'
      | 'ERR_LOCK_LOST'
      | 'ERR_SECRET_HELD'
      | 'ERR_STAGING_FAILED'
      | 'ERR_LOCKED'
      | 'ERR_KUBERNETES'
      | 'ERR_VERIFY_FAILED'
      | 'ERR_STATE'
      | 'ERR_STATE_INTEGRITY'
      | 'ERR_STATE_KEY'
      | 'ERR_ORPHANED_TOKEN'
    >();
    expectTypeOf<ErrorCode>().toEqualTypeOf<RotatorErrorCode | 'ERR_UNEXPECTED'>();
    // Each class's code, on the class and on its instances, has the type of the key it is listed under...
    type Listed = (typeof ERROR_CLASSES)[RotatorErrorCode];
    type Misfiled = {
      [K in RotatorErrorCode]: K extends (typeof ERROR_CLASSES)[K]['code'] & InstanceType<(typeof ERROR_CLASSES)[K]>['code'] ? never : K;
    }[RotatorErrorCode];
    expectTypeOf<Misfiled>().toBeNever();
    expectTypeOf<InstanceType<Listed>['code']>().toEqualTypeOf<RotatorErrorCode>();
    // ...and only the three families, which subclasses extend, have a type as wide as every code.
    type Wide = { [K in RotatorErrorCode]: RotatorErrorCode extends (typeof ERROR_CLASSES)[K]['code'] ? K : never }[RotatorErrorCode];
    type WideOnInstances = {
      [K in RotatorErrorCode]: RotatorErrorCode extends InstanceType<(typeof ERROR_CLASSES)[K]>['code'] ? K : never;
    }[RotatorErrorCode];
    expectTypeOf<Wide>().toEqualTypeOf<'ERR_ROTATOR' | 'ERR_API' | 'ERR_STATE'>();
    expectTypeOf<WideOnInstances>().toEqualTypeOf<'ERR_ROTATOR' | 'ERR_API' | 'ERR_STATE'>();
    expectTypeOf<SinkError['code']>().toEqualTypeOf<'ERR_SINK'>();
    expectTypeOf<(typeof SinkError)['code']>().toEqualTypeOf<'ERR_SINK'>();
  });
});

describe('an output carries only our codes', () => {
  it('which are the ones the output schema lists', () => {
    const outputCodes: ErrorCode[] = [...(Object.keys(ERROR_CLASSES) as RotatorErrorCode[]), UNEXPECTED_ERROR_CODE];
    expect(outputSchema.$defs.Error.properties.code.enum.toSorted()).toEqual(outputCodes.toSorted());
  });

  it('one of ours as it is, from the error or from a copy of it', () => {
    expect(errorSummary(new SinkError('the file could not be written')).code).toBe('ERR_SINK');
    expect(errorSummary({ code: 'ERR_STATE_KEY', message: 'no state key opens it' }).code).toBe('ERR_STATE_KEY');
  });

  it("any other as ERR_UNEXPECTED, the failure's own code left in its message", () => {
    const diskFailure = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    expect(errorSummary(diskFailure)).toEqual({ code: 'ERR_UNEXPECTED', message: 'EIO: i/o error, write' });
    expect(errorSummary(Object.assign(new Error('too large'), { code: 'ERR_RESPONSE_TOO_LARGE' })).code).toBe('ERR_UNEXPECTED');
    expect(errorSummary(Object.assign(new Error('inherited'), { code: 'toString' })).code).toBe('ERR_UNEXPECTED');
  });
});
