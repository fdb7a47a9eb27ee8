import { describe, expect, it } from 'vitest';
import {
  MAX_SMS_TEXT,
  PhoneInputError,
  parseCallAction,
  parseDigits,
  parseSmsText,
} from '../../sandbox/console/phones.ts';
import { PEOPLE, phoneBook, SWITCHBOARD_NUMBER } from '../../sandbox/world.ts';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PhoneInputError);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
};

describe("the sandbox phones' input", () => {
  it('a text is trimmed, and an empty, too long or non-text one is refused with what was wrong', () => {
    expect(parseSmsText('  4 ')).toBe('4');
    expect(refusal(() => parseSmsText('   '))).toBe('type a message first: the text is empty');
    expect(refusal(() => parseSmsText(4))).toBe('text must be a string');
    expect(refusal(() => parseSmsText('x'.repeat(MAX_SMS_TEXT + 1)))).toBe(
      `the text is ${MAX_SMS_TEXT + 1} characters; a phone sends at most ${MAX_SMS_TEXT}`,
    );
    expect(parseSmsText('x'.repeat(MAX_SMS_TEXT))).toHaveLength(MAX_SMS_TEXT);
  });

  it('keys are 0–9, * and #, one to twenty', () => {
    expect(parseDigits('4')).toBe('4');
    expect(parseDigits('*0#')).toBe('*0#');
    expect(refusal(() => parseDigits(''))).toBe('digits are required (0–9, * or #)');
    expect(refusal(() => parseDigits(4))).toBe('digits are required (0–9, * or #)');
    for (const bad of ['A', '4 ', '½', '1'.repeat(21), '4<script>'])
      expect(refusal(() => parseDigits(bad))).toBe(
        'digits must be keypad keys: 0–9, * or #, at most 20 of them',
      );
  });

  it('a call is answered, rejected, hung up or pressed; nothing else', () => {
    for (const a of ['answer', 'reject', 'hangup', 'press']) expect(parseCallAction(a)).toBe(a);
    expect(refusal(() => parseCallAction('transfer'))).toBe(
      'action must be one of answer, reject, hangup, press',
    );
  });
});

describe("the demo world's phones", () => {
  it('everyone has a distinct number in the UK drama range, and none is Switchboard’s', () => {
    const numbers = Object.values(phoneBook());
    expect(numbers).toHaveLength(PEOPLE.length);
    expect(new Set(numbers).size).toBe(PEOPLE.length);
    for (const n of [...numbers, SWITCHBOARD_NUMBER]) expect(n).toMatch(/^\+447700900\d{3}$/);
    expect(numbers).not.toContain(SWITCHBOARD_NUMBER);
  });
});
