/**
 * The config file's scan keys (cli/config-file.ts): the simulated antenna
 * under test (`sim.antenna`) and the Firmata trigger pin
 * (`driver.trigger_pin`), merged onto the defaults and checked like every
 * other key.
 */
import t from 'tap';
import { parseConfig } from '../../cli/config-file';
import { defaultAntennaConfig } from '../../sim/antenna';

t.test('sim.antenna sets the antenna model; the rest keep their defaults', async (t) => {
  const { antenna } = parseConfig({ sim: { antenna: { aperture_width_wl: 5, noise_db: 0, seed: 42 } } });
  t.same(antenna, { ...defaultAntennaConfig(), apertureWidthWl: 5, noiseDb: 0, seed: 42 });
  t.same(parseConfig({}).antenna, defaultAntennaConfig(), 'no key: the defaults');
});

t.test('driver.trigger_pin is read', async (t) => {
  t.equal(parseConfig({ driver: { type: 'firmata', trigger_pin: 13 } }).driver.trigger_pin, 13);
});

t.test('unknown or out-of-range antenna keys are refused, naming them', async (t) => {
  t.throws(() => parseConfig({ sim: { antenna: { aperture_wl: 3 } } }), { name: 'Error', message: /\/sim\/antenna must NOT have additional properties 'aperture_wl'/ });
  t.throws(() => parseConfig({ sim: { antenna: { noise_db: -1 } } }), /\/sim\/antenna\/noise_db must be >= 0/);
  t.throws(() => parseConfig({ sim: { antenna: { aperture_height_wl: 0 } } }), { code: 'CLI_ERR_CONFIG_FILE', message: /aperture_height_wl must be > 0/ });
  t.throws(() => parseConfig({ driver: { trigger_pin: 1 } }), /\/driver\/trigger_pin must be >= 2/);
});
