// agent-tui's web page: answers as markdown, built from text nodes only
// (never HTML from the model). Loaded before app.js.
"use strict";

// ---- markdown (a small, safe subset: text nodes only) --------------------

const KEYWORDS = new Set(("fn let mut pub use struct enum impl match if else for while loop return " +
  "const static async await def class import from as in not and or None True False self " +
  "function var new this null true false type interface export package func go").split(" "));

function highlight(code) {
  const out = document.createDocumentFragment();
  const re = /(\/\/[^\n]*|#[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\b\d+(?:\.\d+)?\b|\b[A-Za-z_]\w*\b)/g;
  let last = 0;
  for (const m of code.matchAll(re)) {
    out.append(code.slice(last, m.index));
    const t = m[0];
    let cls = "";
    if (t.startsWith("//") || t.startsWith("#")) cls = "tok-c";
    else if (t[0] === '"' || t[0] === "'") cls = "tok-s";
    else if (/^\d/.test(t)) cls = "tok-n";
    else if (KEYWORDS.has(t)) cls = "tok-k";
    out.append(cls ? el("span", { class: cls }, t) : t);
    last = m.index + t.length;
  }
  out.append(code.slice(last));
  return out;
}

function inline(text) {
  const out = document.createDocumentFragment();
  const re = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*|\[[^\]]+\]\(https?:\/\/[^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.append(text.slice(last, m.index));
    const t = m[0];
    if (t[0] === "`") out.append(el("code", {}, t.slice(1, -1)));
    else if (t.startsWith("**")) out.append(el("strong", {}, t.slice(2, -2)));
    else if (t[0] === "*") out.append(el("em", {}, t.slice(1, -1)));
    else {
      const [, label, href] = t.match(/^\[([^\]]+)\]\(([^)]+)\)$/);
      out.append(el("a", { href, rel: "noopener noreferrer", target: "_blank" }, label));
    }
    last = m.index + t.length;
  }
  out.append(text.slice(last));
  return out;
}

const ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

// The cells of a table row: `| a | b |` -> ["a", "b"] (`\|` is a bar).
function cells(line) {
  const t = line.trim().replace(/^\|/, "").replace(/(^|[^\\])\|$/, "$1");
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
}

// A table from its header, separator and body rows, aligned per column.
function table(rows) {
  const align = cells(rows[1]).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : ""));
  const row = (line, tag) => el("tr", {}, cells(line).slice(0, align.length).map((c, i) => el(tag, { class: align[i] ? `align-${align[i]}` : undefined }, inline(c))));
  return el("div", { class: "table" }, el("table", {},
    el("thead", {}, row(rows[0], "th")),
    el("tbody", {}, rows.slice(2).map((r) => row(r, "td")))));
}

// Lines as one block of text: a line ending in two spaces (or a
// backslash) breaks there (<br>); other lines are joined by a space.
function joined(parts) {
  const out = document.createDocumentFragment();
  parts.forEach((line, k) => {
    const last = k === parts.length - 1;
    const hard = !last && /( {2,}|\\)$/.test(line);
    out.append(inline(line.replace(hard ? /( +|\\)$/ : /\s+$/, "")));
    if (hard) out.append(el("br"));
    else if (!last) out.append(" ");
  });
  return out;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/;

// A fenced code block from line `i` (its body unindented by as much as the
// opening fence is); returns the <pre> and the line after the closing fence.
function fenced(lines, i) {
  const [, pad, marks, lang] = lines[i].match(FENCE);
  const close = new RegExp(`^\\s*\\${marks[0]}{${marks.length},}\\s*$`);
  const body = [];
  i += 1;
  while (i < lines.length && !close.test(lines[i])) {
    const line = lines[i++];
    const lead = line.match(/^ */)[0].length;
    body.push(line.slice(Math.min(lead, pad.length)));
  }
  return [el("pre", {}, el("code", { "data-lang": lang || undefined }, highlight(body.join("\n")))), i + 1];
}

// A list from line `i` (its items at that line's indent, deeper ones
// nested in the item above; an indented fence is a code block in the
// item); returns the list and the next line.
function list(lines, i) {
  const first = lines[i].match(ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const node = el(ordered ? "ol" : "ul", { start: start !== 1 ? String(start) : undefined });
  let li = null;
  let text = []; // the item's text lines not yet added
  const flush = () => {
    if (text.length && li) {
      if (li.childNodes.length) li.append(" ");
      li.append(joined(text));
    }
    text = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const m = line.match(ITEM);
    if (line.trim() === "") {
      // A blank line inside a list: it goes on if an item follows, or
      // something indented under the current item.
      let j = i;
      while (j < lines.length && lines[j].trim() === "") j += 1;
      const next = j < lines.length && lines[j].match(ITEM);
      const under = j < lines.length && li && !next && lines[j].match(/^\s*/)[0].length > indent + 1;
      if (!under && (!next || next[1].length < indent)) break;
      flush();
      i = j;
      continue;
    }
    if (m && m[1].length <= indent + 1 && m[1].length >= indent) {
      if (/\d/.test(m[2]) !== ordered) break;
      flush();
      li = el("li");
      node.append(li);
      text = [m[3]];
      i += 1;
    } else if (m && m[1].length > indent && li) {
      flush();
      const [sub, next] = list(lines, i);
      li.append(sub);
      i = next;
    } else if (!m && li && FENCE.test(line) && line.match(FENCE)[1].length > indent) {
      flush();
      const [pre, next] = fenced(lines, i);
      li.append(pre);
      i = next;
    } else if (!m && li && /^\s/.test(line) && !RULE.test(line)) {
      text.push(line.trimStart());
      i += 1;
    } else {
      break;
    }
  }
  flush();
  return [node, i];
}

// Markdown as DOM nodes (text only, never parsed as HTML): fences, headings,
// quotes, rules, tables, nested lists, paragraphs.
function markdown(src) {
  const out = document.createDocumentFragment();
  const lines = src.split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) out.append(el("p", {}, joined(para)));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence && fence[1].length <= 3) {
      flush();
      const [pre, next] = fenced(lines, i);
      out.append(pre);
      i = next;
      continue;
    }
    const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/);
    if (heading) {
      flush();
      out.append(el(`h${heading[1].length}`, {}, inline(heading[2])));
    } else if (/^\s{0,3}>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) body.push(lines[i++].replace(/^\s{0,3}> ?/, ""));
      out.append(el("blockquote", {}, markdown(body.join("\n"))));
      continue;
    } else if (RULE.test(line)) {
      flush();
      out.append(el("hr"));
    } else if (line.includes("|") && i + 1 < lines.length && lines[i + 1].includes("|") && TABLE_SEP.test(lines[i + 1])) {
      flush();
      const rows = [line, lines[i + 1]];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") rows.push(lines[i++]);
      out.append(table(rows));
      continue;
    } else if (ITEM.test(line)) {
      flush();
      const [node, next] = list(lines, i);
      out.append(node);
      i = next;
      continue;
    } else if (line.trim() === "") {
      flush();
    } else {
      para.push(line);
    }
    i += 1;
  }
  flush();
  return out;
}

// ---- a streamed answer ---------------------------------------------------

// Markdown drawn as it streams in: the blocks that nothing after them can
// change are laid out once and kept; only the open block at the end is
// drawn again each frame, so a frame costs the same at the answer's end as
// at its start.
class StreamedMarkdown {
  constructor(node) {
    this.node = node;
    this.reset();
  }

  // Forget what was drawn.
  reset() {
    this.node.replaceChildren();
    this.done = 0; // the text drawn for good ends here (at a line start)
    this.settledText = ""; // that text
    this.tail = []; // the nodes of the open block
    this.last = ""; // the text last drawn
  }

  // How much of `src` to draw in one frame: at most `most` characters
  // past the text drawn last, cut at a line's end (a longer line whole), so
  // a frame's layout stays short however much text arrived at once.
  within(src, most) {
    let from = 0;
    if (src.startsWith(this.last)) from = this.last.length;
    else if (src.startsWith(this.settledText)) from = this.done;
    if (src.length - from <= most) return src;
    let cut = src.lastIndexOf("\n", from + most);
    if (cut < from) cut = src.indexOf("\n", from + most);
    return cut < 0 ? src : src.slice(0, cut + 1);
  }

  // Draws `src`: what extends the text drawn for good is added to it; a
  // text that does not (another attempt, a stored answer that differs) is
  // drawn anew.
  show(src) {
    if (!src.startsWith(this.settledText)) this.reset();
    const split = settled(src, this.done);
    for (const n of this.tail) n.remove();
    if (split > this.done) {
      this.node.append(markdown(src.slice(this.done, split)));
      this.done = split;
      this.settledText = src.slice(0, split);
    }
    const open = markdown(src.slice(this.done));
    this.tail = [...open.childNodes];
    this.node.append(open);
    this.last = src;
  }
}

// Where the text from `from` (a line start outside any code block) can be
// cut so that what comes before it draws the same whatever follows: the
// start of the last line that follows a blank line outside a fence and
// begins a new block (not indented, not a list item that could continue a
// list above it), once that line is complete. `from` if there is none.
function settled(src, from) {
  let cut = from;
  let fence = null; // the closing pattern of the fence we are in
  let blank = false;
  let at = from;
  while (at < src.length) {
    const end = src.indexOf("\n", at);
    if (end < 0) break; // an unfinished line decides nothing yet
    const line = src.slice(at, end);
    if (fence) {
      if (fence.test(line)) fence = null;
    } else if (line.trim() === "") {
      blank = true;
    } else {
      if (blank && !/^\s/.test(line) && !ITEM.test(line)) cut = at;
      blank = false;
      const open = line.match(FENCE);
      if (open) fence = new RegExp(`^\\s*\\${open[2][0]}{${open[2].length},}\\s*$`);
    }
    at = end + 1;
  }
  return cut;
}
