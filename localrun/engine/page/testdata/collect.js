// The raw ceiling for BenchmarkObserveBig: a plain collector of the
// interactive elements (a, button, input, select, textarea, [role=button],
// [onclick]) with their text, all attributes and bounding box, returned by
// JSON.stringify. It does what the perf baseline's collector does and
// nothing more: no ids, no frames, no shadow roots, no visibility rules.
(() => {
  const out = [];
  for (const el of document.querySelectorAll('a, button, input, select, textarea, [role=button], [onclick]')) {
    const r = el.getBoundingClientRect();
    const attrs = {};
    for (const a of el.attributes) attrs[a.name] = a.value;
    out.push({
      tag: el.tagName.toLowerCase(),
      text: (el.innerText || el.value || '').trim().slice(0, 200),
      attrs,
      rect: [r.x, r.y, r.width, r.height],
    });
  }
  return JSON.stringify(out);
})()
