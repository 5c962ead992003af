/* Search results quote the page's own text, not its header buttons.
 *
 * Sphinx's searchtools.js quotes the text of [role="main"]. In pydata-sphinx-theme that element also
 * holds the article header (the colour-mode, download and full-screen buttons) and a print-only table
 * of contents, so without this every snippet of a page's title began "System Settings Light Dark".
 * searchtools.js loads after this file (on the search page only) and fetches the pages after
 * DOMContentLoaded, so wrapping it then is in time.
 */
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const quoteMain = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".bd-header-article, .onlyprint, .prev-next-area").forEach((el) => el.remove());
    return quoteMain(page.documentElement.outerHTML, anchor);
  };
});
