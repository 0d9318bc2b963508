import { describe, expect, it } from 'vitest';
import {
  missingVariables,
  placeholdersIn,
  renderPersonalized,
} from '../../domain/personalization.js';
import { parseCsv, readPersonalizationCsv } from '../../domain/personalization-csv.js';

describe('renderPersonalized', () => {
  it('fills every placeholder in one pass: values are never read for placeholders or $ patterns', () => {
    expect(
      renderPersonalized('Hi {{name}}, {{name}}: {{code}}', { name: '{{code}} $& $1', code: '7' }),
    ).toBe('Hi {{code}} $& $1, {{code}} $& $1: 7');
  });

  it('leaves a placeholder without a value, and braces that are not a name, as written', () => {
    expect(renderPersonalized('{{a}} {{Name}} {{ b }} {{{c}}}', { c: 'x' })).toBe(
      '{{a}} {{Name}} {{ b }} {x}',
    );
  });

  it('takes only own keys: a name like constructor is not found on the prototype', () => {
    expect(missingVariables('{{constructor}} {{to_string}}', {})).toEqual([
      'constructor',
      'to_string',
    ]);
    expect(renderPersonalized('{{constructor}}', {})).toBe('{{constructor}}');
  });
});

describe('placeholdersIn', () => {
  it('lists each name once in order, and what is not a name apart', () => {
    expect(placeholdersIn('{{b}} {{a}} {{b}} {{A}} {{1x}} {{}}')).toEqual({
      names: ['b', 'a'],
      invalid: ['{{A}}', '{{1x}}', '{{}}'],
    });
  });
});

describe('readPersonalizationCsv', () => {
  it('reads quoted fields, doubled quotes, CRLF, a BOM and blank lines', () => {
    expect(
      readPersonalizationCsv(
        '\uFEFFnumber,first_name,note\r\n+61412345678,"Ada, Jr","say ""hi""\nthen go"\r\n\r\n+61412345679,Bo,\n',
      ),
    ).toEqual({
      ok: true,
      recipients: ['+61412345678', '+61412345679'],
      personalization: {
        '+61412345678': { first_name: 'Ada, Jr', note: 'say "hi"\nthen go' },
        '+61412345679': { first_name: 'Bo', note: '' },
      },
    });
  });

  it.each([
    ['', 'needs a header row, then one row per recipient'],
    ['number,name', 'needs a header row, then one row per recipient'],
    [
      'number,Name\n+61412345678,Ada',
      'column "Name" is not a variable name: a lowercase letter, then up to 31 lowercase letters, digits or underscores',
    ],
    ['number,a,a\n+61412345678,1,2', 'names a variable column twice'],
    ['number,a,b\n+61412345678,1', 'row 2 has 2 columns; the header has 3'],
    ['number,a\n+61412345678,"open', 'line 2 opens a quote it never closes'],
    [
      `number,${Array.from({ length: 21 }, (_, i) => `v${i}`).join(',')}\n+61412345678`,
      'has 21 variable columns; at most 20',
    ],
  ])('refuses %j: %s', (text, error) => {
    expect(readPersonalizationCsv(text)).toEqual({ ok: false, error });
  });

  it('keeps a row of empty cells as a row', () => {
    expect(parseCsv('a,b\n,\n')).toEqual({
      rows: [
        ['a', 'b'],
        ['', ''],
      ],
    });
  });
});
