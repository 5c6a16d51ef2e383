const mods = process.argv.slice(2);
for (const m of mods) {
  const c0 = process.cpuUsage();
  await import(m);
  const c = process.cpuUsage(c0);
  console.log(((c.user + c.system) / 1000).toFixed(0).padStart(6), 'ms cpu', m);
}
