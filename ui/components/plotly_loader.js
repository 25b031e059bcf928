// Plotly.js for the Action Space, one <script> per page shared by every module that needs it:
// this hidden component, mounted at the top of the workspace so the download and parse overlap
// the rest of the first render, and the chart (action_space.js), which awaits the same promise.
// `data.plotly` is the vendored basic bundle's URL relative to this module (ui/components).

export function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__pqPlotly) {
    window.__pqPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = url;
      script.async = true;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__pqPlotly = null;
        script.remove();
        reject(new Error(`Plotly.js could not be loaded from ${url}`));
      };
      document.head.appendChild(script);
    });
  }
  return window.__pqPlotly;
}

export default function (component) {
  const url = component.data && component.data.plotly;
  // a failure is shown by the chart, which tries again
  if (url) loadPlotly(new URL(url, import.meta.url).href).catch(() => {});
}
