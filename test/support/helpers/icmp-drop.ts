/**
 * The provocation behind a PMTU black hole: `iptables` arguments that drop
 * the ICMP "fragmentation needed" errors a node sends (its OUTPUT chain), run
 * inside a lab namespace. `binary` is the iptables the namespace's rules use
 * (the iptables lab's legacy tables, or the machine's default).
 */
export function dropFragNeededArgs(ns: string, binary: 'iptables' | 'iptables-legacy'): string[] {
  return [
    'netns',
    'exec',
    ns,
    binary,
    '-I',
    'OUTPUT',
    '-p',
    'icmp',
    '--icmp-type',
    'fragmentation-needed',
    '-j',
    'DROP',
  ];
}
