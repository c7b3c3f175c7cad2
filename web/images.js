// Images that go with the next instruction: picked with the
// Image button, dropped on the instruction box, or pasted into it; shown
// as chips (name and size, × takes one off) and sent as the run's
// `images` in base64. The server checks them again (format, 5 MB each).
"use strict";

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const IMAGE_LIMIT = 5 * 1024 * 1024;
const attached = [];

function imageSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// Chips for images as the server describes them ({name, media_type, bytes, width, height}).
function imageChips(images) {
  const chips = document.createElement("div");
  chips.className = "chips";
  for (const i of images || []) {
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.dataset.testid = "image-chip";
    const kind = (i.media_type || "").replace("image/", "").toUpperCase();
    const dims = i.width ? ` ${i.width}×${i.height}` : "";
    chip.textContent = `▣ ${i.name} · ${kind}${dims} · ${imageSize(i.bytes)}`;
    chips.append(chip);
  }
  return chips;
}

// The chips under the instruction box, each with its ×.
function showAttached() {
  const box = document.getElementById("attached");
  box.replaceChildren();
  box.hidden = attached.length === 0;
  attached.forEach((a, n) => {
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.dataset.testid = "attached-chip";
    chip.textContent = `▣ ${a.name} · ${imageSize(a.bytes)} `;
    const drop = document.createElement("button");
    drop.type = "button";
    drop.textContent = "×";
    drop.title = `Do not send ${a.name}`;
    drop.addEventListener("click", () => {
      attached.splice(n, 1);
      showAttached();
    });
    chip.append(drop);
    box.append(chip);
  });
}

// Reads files into the attached list; what is not an image or is too
// large is said at once, and not sent.
async function attachFiles(files) {
  for (const file of files) {
    if (!IMAGE_TYPES.includes(file.type)) {
      imageRefused(`${file.name} is not a PNG, JPEG, GIF or WebP image`);
      continue;
    }
    if (file.size > IMAGE_LIMIT) {
      imageRefused(`${file.name} is ${imageSize(file.size)} and images are limited to 5.0 MB`);
      continue;
    }
    const url = await new Promise((done, fail) => {
      const reader = new FileReader();
      reader.onload = () => done(reader.result);
      reader.onerror = () => fail(reader.error);
      reader.readAsDataURL(file);
    });
    const data = String(url).slice(String(url).indexOf(",") + 1);
    attached.push({ name: file.name || "pasted.png", media_type: file.type, data_base64: data, bytes: file.size });
  }
  showAttached();
}

function imageRefused(text) {
  const note = document.getElementById("attached-note");
  note.textContent = text;
  note.hidden = false;
  setTimeout(() => { note.hidden = true; }, 6000);
}

// The images for a run (and the chips of the message sent), then none.
function takeAttached() {
  const images = attached.splice(0).map(({ name, media_type, data_base64 }) => ({ name, media_type, data_base64 }));
  showAttached();
  return images;
}

// Puts images back after a run that could not start.
function restoreAttached(images) {
  for (const i of images) attached.push({ ...i, bytes: Math.floor(i.data_base64.length * 3 / 4) });
  showAttached();
}

function watchImages() {
  const pick = document.getElementById("image-file");
  document.getElementById("attach").addEventListener("click", () => pick.click());
  pick.addEventListener("change", () => {
    attachFiles([...pick.files]);
    pick.value = "";
  });
  const box = document.getElementById("instruction");
  box.addEventListener("paste", (ev) => {
    const files = [...(ev.clipboardData ? ev.clipboardData.files : [])].filter((f) => IMAGE_TYPES.includes(f.type));
    if (files.length) {
      ev.preventDefault();
      attachFiles(files);
    }
  });
  box.addEventListener("dragover", (ev) => ev.preventDefault());
  box.addEventListener("drop", (ev) => {
    const files = [...(ev.dataTransfer ? ev.dataTransfer.files : [])];
    if (files.length) {
      ev.preventDefault();
      attachFiles(files);
    }
  });
}
