export function sum(values) {
  return values.reduce((a, b) => a + b, 1);
}
