/**
 * Fixer B's rule modules (cli/hooks-cli/lib/device-rules.ts, mac-rules.ts, build-rules.ts,
 * laptop-rules.ts) as pure functions, and the one list of storage roots (paths-classify.ts
 * STORAGE_ROOTS) behind command-rules' STORAGE_ROOT and data-rules' SHARED_MOUNT.
 */
import t from 'tap';
import { buildScriptCommands, buildScriptSource } from '../../cli/hooks-cli/lib/build-rules';
import { sharedMountLoss } from '../../cli/hooks-cli/lib/data-rules';
import { accountLockout, buildOverHost, chipIrreversible, deviceDumpOutputs, isSerialPort, isTargetTool, loopDeviceOfImage, udevRuleChange } from '../../cli/hooks-cli/lib/device-rules';
import { backupLoss, everyPackageRemoved, syncedFolder } from '../../cli/hooks-cli/lib/laptop-rules';
import { isPasswordVault, macFindings, spotlightAsFind } from '../../cli/hooks-cli/lib/mac-rules';
import { REMOVABLE_ROOT, SHARED_MOUNT, STORAGE_ROOT, STORAGE_ROOTS } from '../../cli/hooks-cli/lib/paths-classify';

const env = { home: '/home/u', project: '/home/u/project' };

t.test('one list of storage roots: every root is both a STORAGE_ROOT and a SHARED_MOUNT', async (t) => {
  for (const r of STORAGE_ROOTS) {
    t.ok(STORAGE_ROOT.test(`/${r}`), `/${r} is a storage root`);
    t.equal(SHARED_MOUNT.exec(`/${r}/bob/x`)?.[0], `/${r}`, `/${r}/bob/x is on the shared mount /${r}`);
  }
  // Members one list had and the other lacked before: /fsx and /beegfs, /backups, /archive, /work, /models.
  t.ok(STORAGE_ROOT.test('/fsx'));
  t.match(sharedMountLoss('/backups/alice', env), /whole area of the shared data mount \/backups/);
  t.match(sharedMountLoss('/models', env), /every user's data/);
  // The user's own area is not another's, but all of it at once is every run and dataset kept there (cluster-rules.ts).
  t.match(sharedMountLoss('/scratch/$USER', env), /the user's whole area of the shared mount \/scratch/, "the user's own area, whole");
  t.equal(sharedMountLoss('/scratch/$USER/runs', env), null, "inside the user's own area: everyday clean-up");
  t.match(sharedMountLoss('/project/smithlab/raw_data', env), /top folder of the group's shared area/, "a group's top folder");
  t.equal(sharedMountLoss('/project/smithlab/shared/mjones', env), null, "deeper in a group's area: everyday work");
  t.equal(SHARED_MOUNT.exec('/mnt/c/Users')?.[0], undefined, "a WSL drive letter is not a shared mount");
  t.notOk(STORAGE_ROOT.test('/app'), 'a bare /app (inside a container) is not a storage root');
  t.equal(sharedMountLoss('/mnt/rootfs/tmp', env), null, "a mounted image's tmp holds nobody's data");
});

t.test('removable media roots: every drive of the user, one drive, a Mac volume', async (t) => {
  for (const p of ['/media/$USER', '/run/media/$USER', '/media/pi/SDCARD', '/Volumes/Photos']) t.ok(REMOVABLE_ROOT.test(p), p);
  for (const p of ['/media/pi/SDCARD/DCIM', '/Volumes/Photos/2024']) t.notOk(REMOVABLE_ROOT.test(p), p);
});

t.test('a target tool restarts its target; serial ports and loop devices of images are the user\'s', async (t) => {
  for (const n of ['picotool', 'openocd', 'arm-none-eabi-gdb', 'gdb-multiarch', 'xcrun', 'adb', 'vagrant', 'virsh']) t.ok(isTargetTool(n), n);
  for (const n of ['sudo', 'systemctl', 'ssh', 'bash']) t.notOk(isTargetTool(n), n);
  t.ok(isSerialPort('/dev/ttyUSB0'));
  t.ok(isSerialPort('/dev/cu.usbserial-0001'));
  t.notOk(isSerialPort('/dev/sda'));
  t.ok(loopDeviceOfImage('sudo losetup -fP --show sdcard.img'));
  t.notOk(loopDeviceOfImage('losetup -fP --show /dev/sdb'), 'a loop over a real disk is that disk');
  t.notOk(loopDeviceOfImage('lsblk -no NAME'));
});

t.test('udev rules: a warning, a block when the rule runs a program or opens every disk', async (t) => {
  t.equal(udevRuleChange('/etc/udev/rules.d/49-stlink.rules', 'SUBSYSTEM=="usb", ATTRS{idVendor}=="0483", MODE="0666"'), 'warn');
  t.equal(udevRuleChange('/etc/udev/rules.d/49-stlink.rules', null), 'warn');
  t.equal(udevRuleChange('/etc/udev/rules.d/90-x.rules', 'ACTION=="add", RUN+="/tmp/x.sh"'), 'block');
  t.equal(udevRuleChange('/etc/udev/rules.d/99-disks.rules', 'KERNEL=="sd*", MODE="0666"'), 'block');
  t.equal(udevRuleChange('/etc/hosts', 'x'), null);
});

t.test('chip settings that never come back are refused; those that can be undone or that ask are not', async (t) => {
  t.match(chipIrreversible(['espefuse.py', '--port', '/dev/ttyUSB0', '--do-not-confirm', 'burn_efuse', 'JTAG_DISABLE', '1'], null), /eFuses/);
  t.match(chipIrreversible(['espefuse.py', 'burn_efuse', 'DIS_USB_JTAG', '1'], 'BURN\n'), /eFuses/, 'BURN given on stdin is the confirmation');
  t.equal(chipIrreversible(['espefuse.py', 'burn_efuse', 'DIS_USB_JTAG', '1'], null), null, 'without --do-not-confirm espefuse asks');
  t.match(chipIrreversible(['python3', '-m', 'espefuse', '--do-not-confirm', 'write_protect_efuse', 'RD_DIS'], null), /eFuses/);
  t.match(chipIrreversible(['STM32_Programmer_CLI', '-c', 'port=SWD', '-ob', 'RDP=0xCC'], null), /level 2/);
  t.equal(chipIrreversible(['STM32_Programmer_CLI', '-c', 'port=SWD', '-ob', 'RDP=0xBB'], null), null, 'level 1 is undone by a mass erase');
  t.match(chipIrreversible(['avrdude', '-p', 't85', '-U', 'hfuse:w:0x5F:m'], null), /reset pin or serial programming/);
  t.equal(chipIrreversible(['avrdude', '-p', 'm328p', '-U', 'hfuse:w:0xDE:m'], null), null, 'reset and SPI enabled');
});

t.test('a build installed over /, and accounts locked or stripped of their groups', async (t) => {
  t.match(buildOverHost(['make', '-C', 'output/build/busybox-1.36.1', 'install', 'CONFIG_PREFIX=/']), /over the host's own/);
  t.equal(buildOverHost(['make', 'install', 'CONFIG_PREFIX=/home/u/rootfs']), null);
  t.equal(buildOverHost(['make', 'modules_install', 'INSTALL_MOD_PATH=/mnt/rootfs']), null);
  t.match(accountLockout(['usermod', '-G', 'dialout', '$USER']), /supplementary group/);
  t.equal(accountLockout(['usermod', '-aG', 'dialout', '$USER']), null);
  t.match(accountLockout(['usermod', '-L', '$USER']), /locks/);
  t.equal(accountLockout(['passwd', '-l', 'root']), null, "locking root's password is hardening, not a lockout");
});

t.test('flash read back from a board and exported accounts are kept as secrets of the line', async (t) => {
  t.same(deviceDumpOutputs(['esptool.py', '--port', '/dev/ttyUSB0', 'read_flash', '0x9000', '0x6000', 'nvs.bin']), ['nvs.bin']);
  t.same(deviceDumpOutputs(['avrdude', '-p', 'm328p', '-U', 'eeprom:r:ee.hex:i']), ['ee.hex']);
  t.same(deviceDumpOutputs(['esptool.py', 'write_flash', '0x0', 'fw.bin']), []);
});

t.test('Spotlight is read as the find it stands for', async (t) => {
  t.same(spotlightAsFind(['mdfind', '-name', '.env'], '/home/u'), ['find', '/', '/home/u', '-name', '.env']);
  t.same(spotlightAsFind(['mdfind', '-onlyin', '/home/u/Documents', 'kMDItemFSName == "*"'], '/home/u'), ['find', '/home/u/Documents']);
  t.same(spotlightAsFind(['mdfind', '-onlyin', '/home/u', 'kMDItemContentTypeTree == "public.image"'], '/home/u'), ['find', '/home/u', '-name', '*.jpg']);
  t.equal(spotlightAsFind(['find', '.'], '/home/u'), null);
});

t.test('Mac stores: identities, match nuke, snapshots, global preferences, every cask, vaults', async (t) => {
  t.equal(macFindings(['security', 'delete-identity', '-c', 'Apple Distribution: X'], [], []).length, 1);
  t.equal(macFindings(['security', 'find-identity', '-v'], [], []).length, 0);
  t.equal(macFindings(['brew', 'uninstall', '--zap', '--force'], ['brew list --cask'], []).length, 1);
  t.equal(macFindings(['brew', 'uninstall', '--zap', '--cask', 'docker'], [], []).length, 0, 'one cask named is ordinary');
  t.equal(macFindings(['defaults', 'delete', 'com.apple.finder', 'AppleShowAllFiles'], [], []).length, 0);
  t.ok(isPasswordVault('/home/u/Library/Keychains/login.keychain-db'));
  t.notOk(isPasswordVault('/home/u/project/keychain.md'));
});

t.test('build scripts given on the line are read for the commands they run', async (t) => {
  t.equal(buildScriptSource(['cmake', '-P', '/dev/stdin']), 'stdin');
  t.equal(buildScriptSource(['cmake', '-P', 'cmake/version.cmake']), null);
  t.same(buildScriptCommands('cmake', 'file(REMOVE_RECURSE $ENV{HOME})').shell, ['rm -rf "$HOME"']);
  t.same(buildScriptCommands('ninja', 'rule x\n  command = rm -rf $$HOME/*\n').shell, ['rm -rf $HOME/*']);
  t.match(buildScriptCommands('scons', 'Execute(Delete("~/x"))').python ?? '', /shutil\.rmtree\("~\/x"\)/);
});

t.test('backups destroyed, and synced folders', async (t) => {
  t.match(backupLoss(['borg', 'delete', '/home/u/backups/borg']), /whole backup repository/);
  t.equal(backupLoss(['borg', 'delete', '/home/u/backups/borg::laptop-2024-01-01']), null);
  t.match(backupLoss(['restic', '-r', 'r', 'forget', '--keep-last', '1', '--prune']), /drops every older snapshot/);
  t.equal(backupLoss(['restic', '-r', 'r', 'forget', '--keep-daily', '7', '--prune']), null);
  t.match(backupLoss(['timeshift', '--delete-all']), /every system snapshot/);
  t.match(everyPackageRemoved(['pacman', '-Rns'], ['pacman -Qq'], []), /every installed package/);
  t.equal(everyPackageRemoved(['pacman', '-Rns'], ['pacman -Qdtq'], []), null, 'the orphans -Qdt lists are not every package');
  t.match(everyPackageRemoved(['apt-get', 'purge', '-y'], [], [['dpkg', '--get-selections'], ['awk', '{print $1}']]), /every installed package/);
  t.equal(everyPackageRemoved(['dpkg', '--purge'], [], [['dpkg', '-l'], ['grep', '^rc'], ['awk', '{print $2}']]), null, 'a grep narrows the listing');
  t.equal(syncedFolder('/home/u/Dropbox/Public/k', env), 'Dropbox');
  t.equal(syncedFolder('/home/u/Dropbox (Personal)/k', env), 'Dropbox');
  t.equal(syncedFolder('/home/u/code/k', env), null);
});
