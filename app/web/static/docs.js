// Starts Swagger UI on /docs (kept out of the page so no inline script is needed).
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-openapi'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    showExtensions: true,
  });
})();
