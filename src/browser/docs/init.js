// A family's reference page: Swagger UI on the OpenAPI document beside the page (`schema`). The
// bundle (swagger-ui-bundle.js, from the swagger-ui-dist package) is a classic script that runs before
// this module and leaves its one global, SwaggerUIBundle. Without a URL of its own the page would fetch
// the petstore example; validatorUrl: null keeps the UI from sending the document to an outside validator.
const { SwaggerUIBundle } = globalThis;

SwaggerUIBundle({
  url: new URL('schema', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  showExtensions: true,
  showCommonExtensions: true,
});
