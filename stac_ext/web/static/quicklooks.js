// Quicklooks on our pages: each `img[data-quicklook]` loaded as any picture of this service
// (with the browser's sign-in: a private item's picture is its reader's), shown once it has
// arrived; one that is not there for them stays hidden.
"use strict";
(() => {
  function show(image) {
    if (image.dataset.loaded) return;
    image.dataset.loaded = "yes";
    image.addEventListener("load", () => { image.hidden = false; });
    image.src = image.dataset.quicklook;
  }

  const all = () => document.querySelectorAll("img[data-quicklook]").forEach(show);
  all();
  document.addEventListener("geocatalog:fragment", all);
})();
