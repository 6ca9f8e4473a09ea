/**
 * The page's only two static files, served by the UI handler itself (nothing
 * is fetched from elsewhere): the stylesheet, and the script of the copy
 * buttons. Inline styles and scripts are forbidden by the Content-Security-Policy.
 *
 * @module
 */

/** `assets/app.css`: system fonts, AA contrast, visible focus. */
export const CSS = `:root{color-scheme:light;--fg:#1b1f24;--muted:#4a5360;--bg:#fff;--line:#d0d7de;--accent:#0b5cad;--danger:#a40e26}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}a:focus,button:focus,input:focus,select:focus{outline:3px solid #f5a623;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px}
header{display:flex;gap:16px;align-items:center;padding:10px 20px;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}header nav{display:flex;gap:14px;flex:1}
main{padding:16px 20px;max-width:1100px}h1{font-size:1.5rem;margin:.2em 0 .6em}h2{font-size:1.15rem;margin-top:1.6em}
table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;word-break:break-all}
.muted{color:var(--muted)}.notice{padding:8px 12px;border:1px solid var(--line);border-left:4px solid var(--accent);margin:8px 0}
.error{border-left-color:var(--danger)}button{font:inherit;padding:4px 10px;border:1px solid #57606a;border-radius:4px;background:#f6f8fa;color:var(--fg);cursor:pointer}
button.danger{color:#fff;background:var(--danger);border-color:var(--danger)}form.inline{display:inline}
label{display:block;font-weight:600;margin-top:8px}input,select{font:inherit;padding:4px 6px;border:1px solid #57606a;border-radius:4px}
.pull{display:flex;gap:8px;align-items:center;margin:4px 0}.pull code{flex:1;padding:4px 6px;background:#f6f8fa;border:1px solid var(--line)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dt{font-weight:600}dd{margin:0}`;

/** `assets/app.js`: copy buttons (`data-copy` names the element whose text is copied). */
export const JS = `document.addEventListener("click",async(e)=>{const b=e.target.closest("button[data-copy]");if(!b)return;
const t=document.getElementById(b.dataset.copy);if(!t)return;try{await navigator.clipboard.writeText(t.textContent);b.textContent="Copied";}
catch{b.textContent="Copy failed";}setTimeout(()=>{b.textContent="Copy";},2000);});`;
