/** Polls until `probe` returns something other than undefined, or fails after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 20_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
