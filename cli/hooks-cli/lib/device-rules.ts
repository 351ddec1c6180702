/**
 * Device rules: what an embedded or mobile developer does to hardware that is not the host. A
 * board, a phone, a simulator or a VM is reached through its own tools (openocd, gdb `monitor`,
 * picotool, adb, `xcrun simctl`, virsh...), through its serial port (/dev/ttyUSB0) or through an SD
 * card or image the line itself made (losetup --show IMAGE). Their reboot, halt and shutdown are
 * the target's, not the machine's; writing to a serial port sends text to a board. What stays
 * refused is what a chip never takes back: one-time-programmable fuses and read-out protection
 * level 2 (espefuse burn_*, STM32 RDP=0xCC, an AVR fuse that disables reset or ISP).
 *
 * Pure functions over argv and paths; command-rules.ts calls them and turns what they return into
 * findings.
 */

/** Verbs that stop or restart a machine (whose machine depends on the tool given them). */
export const MACHINE_VERB = /^(shutdown|reboot|halt|poweroff)$/;

/**
 * Tools that address a target other than the host: debug probes and flashers, phones and their
 * simulators, emulators and VMs. A machine verb given to them (picotool reboot, adb reboot, xcrun
 * simctl shutdown all, vagrant halt, virsh shutdown vm) stops or restarts that target.
 */
const TARGET_TOOLS = /^(openocd|(\w+-)*gdb(-multiarch)?|lldb|picotool|pyocd|probe-rs|JLinkExe|JLink|st-flash|st-util|STM32_Programmer_CLI|nrfjprog|nrfutil|esptool(\.py)?|idf\.py|west|pio|platformio|mpremote|ampy|rshell|particle|arduino-cli|dfu-util|teensy_loader_cli|bossac|uuu|xcrun|simctl|xcdevice|devicectl|ios-deploy|idevicediagnostics|cfgutil|adb|fastboot|emulator|avdmanager|vagrant|virsh|VBoxManage|vboxmanage|multipass|limactl|colima|qm|pct|prlctl|utmctl|tart|lxc|incus|balena|docker-machine|minikube|kind|podman-machine)$/;

export function isTargetTool(name: string): boolean {
  return TARGET_TOOLS.test(name);
}

/** Serial and console ports: writing to one sends text to a board or a modem. */
const SERIAL_NODE = /^\/dev\/(tty(USB|ACM|AMA|THS|S|GS|XRUSB|SAC|MFD|O)\d+|tty\.[\w.-]+|cu\.[\w.-]+|rfcomm\d+|pts\/\d+|serial\/by-(id|path)\/[^/]+)$/;
/** Nodes of the user's own hardware (serial, USB, video, input, GPIO, I2C, SPI, sound), made again at the next plug or boot. */
const USER_DEVICE_NODE = /^\/dev\/(bus\/usb\/\d+\/\d+|video\d+|media\d+|i2c-\d+|spidev[\d.]+|gpiochip\d+|gpiomem|hidraw\d+|input\/event\d+|snd\/[\w-]+|kvm|uinput|dri\/[\w-]+)$/;

export function isSerialPort(abs: string): boolean {
  return SERIAL_NODE.test(abs);
}

export function isUserDeviceNode(abs: string): boolean {
  return SERIAL_NODE.test(abs) || USER_DEVICE_NODE.test(abs);
}

/**
 * A udev rule installed, written or removed (/etc/udev/rules.d/NAME.rules): how a programmer or a
 * serial adapter is given to the user. A rule that runs a program (RUN+=, PROGRAM=, IMPORT{program})
 * runs it as root at every plug: refused when its text says so. Returns 'warn', 'block' or null
 * (not a udev rule).
 */
export function udevRuleChange(abs: string, text: string | null): 'warn' | 'block' | null {
  if (!/^\/(etc|lib|usr\/lib)\/udev\/rules\.d(\/[^/]+\.rules)?$/.test(abs)) return null;
  if (text === null) return 'warn';
  // KERNEL=="sd*", MODE="0666": every disk opened to every user (raw reads and writes without root).
  const disks = /SUBSYSTEMS?=="block"|KERNEL=="(sd|hd|vd|nvme|mmcblk|loop|dm-|md|nbd)/.test(text) && /MODE\s*:?=\s*"0?[0-7][0-7][2367]"/.test(text);
  return disks || /\b(RUN|PROGRAM)\s*\+?=|IMPORT\{program\}/.test(text) ? 'block' : 'warn';
}

/** A substitution that makes a loop device of an image file and prints it (losetup -fP --show sdcard.img). */
export function loopDeviceOfImage(sub: string): boolean {
  const a = sub.trim().replace(/^sudo\s+/, '').split(/\s+/);
  if (a[0] !== 'losetup' || !a.some((x) => x === '--show' || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(x))) return false;
  const file = a.slice(1).filter((x, k, all) => !x.startsWith('-') && !/^(-o|--offset|--sizelimit|-b|--sector-size)$/.test(all[k - 1] ?? ''));
  return file.length === 1 && !file[0].startsWith('/dev/');
}

/** Options whose value is a kernel command line for a guest or a board (root=/dev/vda is the guest's disk). */
export const KERNEL_CMDLINE_OPT = /^(-append|--append|--cmdline|--kernel-cmdline|-cmdline|--bootargs)$/;

/**
 * Settings a chip never takes back: one-time-programmable eFuses burned without the confirmation
 * (espefuse burn_*, write_protect_efuse, idf.py efuse-burn), STM32 read-out protection level 2
 * (RDP=0xCC: debug and reflashing gone for good), an AVR high fuse that disables reset or serial
 * programming (RSTDISBL programmed, SPIEN unprogrammed: no more ISP). Returns the reason, or null.
 */
export function chipIrreversible(argv: string[], stdin: string | null): string | null {
  const [name, ...args] = argv;
  const b = (name ?? '').replace(/^.*\//, '');
  const mod = b === 'python' || /^python[\d.]*$/.test(b) ? (args[0] === '-m' ? args[1] : undefined) : undefined;
  const confirmed = args.includes('--do-not-confirm') || /^\s*BURN\b/m.test(stdin ?? '');
  if ((/^espefuse(\.py)?$/.test(b) || mod === 'espefuse') && confirmed) {
    const verb = args.find((a) => /^(burn_\w+|write_protect_efuse|read_protect_efuse|set_flash_voltage)$/.test(a));
    if (verb) return `espefuse ${verb} burns one-time-programmable eFuses without asking: the chip keeps them for good (JTAG, USB download or flash encryption can never be turned back)`;
  }
  if (b === 'idf.py' && confirmed && args.some((a) => /^efuse-(burn|burn-key|write-protect|read-protect)/.test(a))) return `idf.py ${args.find((a) => a.startsWith('efuse-'))} burns one-time-programmable eFuses without asking: the chip keeps them for good`;
  // openocd -c '… stm32l4x option_write 0 0x20 0xCC …': the same level 2 written through the probe.
  if (b === 'openocd' && args.some((a) => /\boptions?_write\b[^;]*\b0x[cC]{2}\b/.test(a))) return 'openocd writes read-out protection level 2 (0xCC) into the option bytes: debugging and reflashing the chip are gone for good';
  if (/^STM32_Programmer_CLI(\.exe)?$/i.test(b) && args.some((a) => /^RDP=(0x)?CC$/i.test(a))) return 'STM32_Programmer_CLI sets read-out protection level 2 (RDP=0xCC): debugging and reflashing the chip are gone for good';
  if (b === 'avrdude') {
    for (const a of args) {
      const m = /^(?:-U)?hfuse:w:(0x[0-9a-f]{1,2}|0b[01]{1,8}|\d{1,3}):m$/i.exec(a);
      if (!m) continue;
      const v = m[1].toLowerCase().startsWith('0b') ? parseInt(m[1].slice(2), 2) : Number(m[1]);
      // Bit 7 programmed (0): RSTDISBL on the ATtiny and ATmega328 families; bit 5 unprogrammed (1): SPIEN off.
      if ((v & 0x80) === 0 || (v & 0x20) !== 0) return `avrdude writes the high fuse ${m[1]}, which disables the reset pin or serial programming: the chip can no longer be reprogrammed over ISP`;
    }
  }
  return null;
}

/**
 * A build tree installed over the host's own root: busybox's `make install CONFIG_PREFIX=/` links its
 * applets over /bin/sh and the rest; a cross build's DESTDIR=/ puts another architecture's programs
 * and libraries where the host's are. Returns the reason, or null.
 */
export function buildOverHost(argv: string[]): string | null {
  if (!/^(make|gmake)$/.test(argv[0] ?? '') || !argv.some((a) => /^(\w+[-_])?install$/.test(a))) return null;
  const root = argv.find((a) => /^(CONFIG_PREFIX|DESTDIR|INSTALL_ROOT|INSTALL_MOD_PATH|TARGET_DIR)=\/*\.?\/*$/.test(a) && a.endsWith('/'));
  if (!root) return null;
  const cross = root.startsWith('CONFIG_PREFIX=') || argv.some((a) => /^(ARCH|CROSS_COMPILE|CC|HOSTCC)=|output\/build\/|buildroot|yocto|busybox|tmp\/work\/|sysroot/.test(a));
  return cross ? `make install ${root} puts a build meant for a board or an image over the host's own /: its shell and system programs are replaced` : null;
}

/** Accounts whose login the line takes away: a locked or expired own account (or root's), or supplementary groups replaced (usermod -G without -a drops sudo). */
export function accountLockout(argv: string[]): string | null {
  const [name, ...args] = argv;
  if (!/^(usermod|passwd|chage|chsh)$/.test(name ?? '')) return null;
  const valued = { usermod: /^(-[Ggsecdlpuf]|--(groups|gid|shell|expiredate|comment|home|login|password|uid|inactive))$/, chage: /^(-[EImMWd]|--\w+)$/, chsh: /^(-s|--shell)$/, passwd: /^(-[nxwi]|--(mindays|maxdays|warndays|inactive))$/ }[name as 'usermod'];
  const who = args.filter((a, k) => !a.startsWith('-') && !valued.test(args[k - 1] ?? ''));
  const self = who.length === 0 || who.some((u) => /^("?\$\{?(USER|LOGNAME)\}?"?|"?\$\((whoami|id -un|logname)\)"?|\$\(…\))$/.test(u));
  if (name === 'usermod' && args.some((a) => /^(-G|--groups)$/.test(a) || /^--groups=/.test(a)) && !args.some((a) => /^(-[a-zA-Z]*a[a-zA-Z]*|--append)$/.test(a) || /^-aG/.test(a)))
    return 'replaces every supplementary group of the account (usermod -G without -a): it leaves sudo/wheel and the rest';
  if (!self) return null;
  if ((name === 'usermod' && args.some((a) => /^(-L|--lock)$/.test(a))) || (name === 'passwd' && args.some((a) => /^(-l|--lock)$/.test(a)))) return 'locks the account the user logs in with';
  if ((name === 'usermod' || name === 'chage') && args.some((a, k) => /^(-e|--expiredate|-E)$/.test(args[k - 1] ?? '') && /^(0|1|19\d\d-.*)$/.test(a))) return 'expires the account the user logs in with';
  if ((name === 'usermod' || name === 'chsh') && args.some((a, k) => /^(-s|--shell)$/.test(args[k - 1] ?? '') && /\/(nologin|false)$/.test(a))) return 'gives the account the user logs in with no shell';
  return null;
}

/**
 * Files a board's flash or settings are read back into (esptool read_flash … FILE, espefuse dump,
 * st-flash read FILE, picotool save FILE, avrdude -U flash:r:FILE, nrfjprog --readcode FILE,
 * openocd dump_image FILE): they hold what the board keeps, Wi-Fi passwords and keys among it.
 */
export function deviceDumpOutputs(argv: string[]): string[] {
  const [name, ...args] = argv;
  const b = (name ?? '').replace(/^.*\//, '');
  if (/^esptool(\.py)?$/.test(b) || (/^python[\d.]*$/.test(b) && args[1] === 'esptool')) {
    const k = args.findIndex((a) => /^read[-_]flash$/.test(a));
    return k >= 0 ? args.slice(k + 1).filter((a) => !a.startsWith('-') && !/^(0x[0-9a-f]+|\d+|ALL)$/i.test(a)).slice(-1) : [];
  }
  if (b === 'st-flash' && args.includes('read')) return args.slice(args.indexOf('read') + 1, args.indexOf('read') + 2);
  if (b === 'picotool' && args[0] === 'save') return args.slice(1).filter((a) => !a.startsWith('-')).slice(-1);
  if (b === 'nrfjprog') return args.filter((a, k) => /^--readcode$|^--readuicr$/.test(args[k - 1] ?? ''));
  if (b === 'avrdude') return args.map((a) => /^(?:-U)?(?:flash|eeprom):r:([^:]+)(:\w)?$/.exec(a)?.[1]).filter((x): x is string => x !== undefined);
  if (b === 'openocd') return args.flatMap((a) => [...a.matchAll(/\bdump_image\s+(\S+)/g)].map((m) => m[1]));
  return [];
}
