/**
 * Byte counts for people: `1536` → `1.5 KiB`.
 *
 * @module
 */

/** `n` bytes in binary units with one decimal (`1536` → `1.5 KiB`, `12` → `12 B`). */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
