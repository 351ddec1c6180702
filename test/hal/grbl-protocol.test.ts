/**
 * The grbl protocol helpers: status reports, settings, codes, numbers and
 * line splitting, including what arbitrary bytes from the wire do to them
 * (nothing: null, never a throw).
 */
import fc from 'fast-check';
import t from 'tap';
import {
  compactNumber,
  parseOptionsLine,
  parseVersionLine, formatNumber, LineSplitter, parseCode, parseSetting, parseStatusReport } from '../../hal/grbl-protocol';

t.test('status reports parse into state, position, feed and pins', (t) => {
  t.strictSame(parseStatusReport('<Run|MPos:12.500,-3.250,0.000|FS:600,0|Pn:XY>'), { state: 'Run', subState: null, mpos: [12.5, -3.25], wpos: null, feed: 600, pins: 'XY' });
  t.strictSame(parseStatusReport('<Hold:1|WPos:1.000,2.000,3.000|F:100>')?.subState, 1);
  t.strictSame(parseStatusReport('<Hold:1|WPos:1.000,2.000,3.000|F:100>')?.wpos, [1, 2]);
  t.equal(parseStatusReport('<Idle|MPos:1.000,2.000,0.000|Bf:15,128|FS:0,0|WCO:0,0,0>')?.state, 'Idle', 'unknown fields are skipped');
  for (const bad of ['<Idle>', '<Walking|MPos:1,2,3>', '<Idle|MPos:abc,1,2>', '<Idle|MPos:1>', 'Idle|MPos:1,2,3', '<Idle|MPos:1,2,3|FS:-5,0>', '<Hold:x|MPos:1,2,3>', '<Idle|MPos:1,,3>']) {
    t.equal(parseStatusReport(bad), null, `refused: ${bad}`);
  }
  t.end();
});

t.test('settings, error and alarm lines', (t) => {
  t.strictSame(parseSetting('$100=320.000'), { id: 100, value: 320 });
  t.strictSame(parseSetting('$23=3'), { id: 23, value: 3 });
  t.equal(parseSetting('$100=abc'), null);
  t.equal(parseSetting('$N0='), null);
  t.equal(parseCode('error:22', 'error'), 22);
  t.equal(parseCode('ALARM:9', 'ALARM'), 9);
  t.equal(parseCode('error:', 'error'), null);
  t.equal(parseCode('xerror:1', 'error'), null);
  t.end();
});

t.test('numbers are printed as grbl reads them: fixed decimals, no exponent, no -0', (t) => {
  t.equal(formatNumber(1e-7, 3), '0.000');
  t.equal(formatNumber(-0.0001, 3), '0.000');
  t.equal(formatNumber(123456.789, 3), '123456.789');
  t.equal(formatNumber(-2, 3), '-2.000');
  t.end();
});

t.test('arbitrary text never makes a parser throw', (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 120 }), (line) => {
      parseStatusReport(line);
      parseSetting(line);
      parseCode(line, 'error');
      parseCode(line, 'ALARM');
      return true;
    }),
    { numRuns: 2000 },
  );
  t.end();
});

t.test('the line splitter joins chunks, drops CR, and cuts overlong garbage without growing', (t) => {
  const lines: [string, boolean][] = [];
  const splitter = new LineSplitter((line, overlong) => lines.push([line, overlong]), 16);
  splitter.push('ok\r\n<Idle|MP');
  splitter.push('os:1,2,3>\r\nerr');
  t.strictSame(lines, [
    ['ok', false],
    ['<Idle|MPos:1,2,3', true],
  ]);
  splitter.clear();
  splitter.push('or:9\n');
  t.strictSame(lines[2], ['or:9', false], 'clear() forgets a half line');
  splitter.push('x'.repeat(100000) + '\n');
  t.strictSame(lines[3], ['x'.repeat(16), true]);
  t.end();
});

t.test('$I lines: [VER:...] and [OPT:letters,blocks,rx] parsed; anything else is null', (t) => {
  t.equal(parseVersionLine('[VER:1.1h.20190825:]'), '1.1h.20190825');
  t.equal(parseVersionLine('[VER:1.1f.20170801:my machine]'), '1.1f.20170801');
  t.equal(parseVersionLine('[MSG:Caution: Unlocked]'), null);
  t.strictSame(parseOptionsLine('[OPT:VH,15,128]'), { options: 'VH', plannerBlocks: 15, rxBufferBytes: 128 });
  t.strictSame(parseOptionsLine('[OPT:V,15,128]'), { options: 'V', plannerBlocks: 15, rxBufferBytes: 128 });
  t.equal(parseOptionsLine('[OPT:vh,15]x'), null);
  t.end();
});

t.test('compactNumber: no trailing zeros, no -0, at most the decimals asked', (t) => {
  t.equal(compactNumber(93.3), '93.3');
  t.equal(compactNumber(-190), '-190');
  t.equal(compactNumber(-0.00001), '0');
  t.equal(compactNumber(1 / 800), '0.0013');
  t.equal(compactNumber(670.8203932, 3), '670.82');
  t.end();
});
