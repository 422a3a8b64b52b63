// An API's documentation page: Swagger UI on the API's own OpenAPI document.
"use strict";
window.addEventListener("DOMContentLoaded", () => {
  const element = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({ url: element.dataset.openapi, domNode: element, deepLinking: true });
});
