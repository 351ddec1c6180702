import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { loadConfig, parseConfig } from '../../cli/config-file';
import { axisStepsPerDeg, defaultConfig } from '../../firmware/config';

t.test('no file gives the defaults: 320 and 800 microsteps per degree', (t) => {
  const { config, sim } = loadConfig();
  t.same(config, defaultConfig());
  t.equal(axisStepsPerDeg(config, 'theta'), 320);
  t.equal(axisStepsPerDeg(config, 'phi'), 800);
  t.not(sim.axes.theta.powerOnDeg, 0, 'the simulated machine does not power on at zero');
  t.end();
});

t.test('keys given are merged onto the defaults; the rest stay', (t) => {
  const { config, sim } = parseConfig({ speed: 5, microstepping: 8, phi: { gear_ratio: 45, homing: { feed_speed: 0.5 } }, sim: { theta: { power_on_deg: 12 } } });
  t.equal(config.speedDegS, 5);
  t.equal(config.accelDegS2, defaultConfig().accelDegS2);
  t.equal(axisStepsPerDeg(config, 'phi'), (200 * 8 * 45) / 360);
  t.equal(config.axes.phi.homing.feedDegS, 0.5);
  t.equal(config.axes.phi.homing.seekDegS, defaultConfig().axes.phi.homing.seekDegS);
  t.equal(sim.axes.theta.powerOnDeg, 12);
  t.end();
});

t.test('unknown keys, wrong types and out-of-range values are refused, naming the key', (t) => {
  const bad: [unknown, RegExp][] = [
    [{ sped: 5 }, /sped/],
    [{ theta: { gear_ratio: 36, gearratio: 2 } }, /gearratio/],
    [{ speed: '10' }, /speed.*number/],
    [{ accel: 0 }, /accel/],
    [{ speed: 1e-320 }, /speed/],
    [{ phi: { homing: { seek_speed: 1e-320 } } }, /seek_speed/],
    [{ microstepping: 3 }, /microstepping/],
    [{ speed: 100 }, /speed 100 is above max_speed 60/],
    [[1, 2], /object/],
  ];
  for (const [data, message] of bad) {
    t.throws(() => parseConfig(data, 'test.json'), { code: 'CLI_ERR_CONFIG_FILE', message }, JSON.stringify(data));
  }
  t.end();
});

t.test('a missing or unparsable file is a clear error naming the file', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const missing = path.join(dir, 'nope.json');
  t.throws(() => loadConfig(missing), { message: new RegExp(`cannot read config file ${missing}`) });
  const broken = path.join(dir, 'broken.json');
  fs.writeFileSync(broken, '{"speed": 5,');
  t.throws(() => loadConfig(broken), { message: /broken\.json is not valid JSON/ });
  const good = path.join(dir, 'good.json');
  fs.writeFileSync(good, JSON.stringify({ accel: 40 }));
  t.equal(loadConfig(good).config.accelDegS2, 40);
  t.end();
});

t.test('driver.max_step_rate (Firmata: what the board makes on one axis) is read, and checked', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, 'c.json');
  fs.writeFileSync(file, JSON.stringify({ driver: { type: 'firmata', serial: '/dev/ttyACM0', max_step_rate: 12000 } }));
  t.equal(loadConfig(file).driver.max_step_rate, 12000);
  fs.writeFileSync(file, JSON.stringify({ driver: { max_step_rate: 0 } }));
  t.throws(() => loadConfig(file), /max_step_rate/);
  t.end();
});
