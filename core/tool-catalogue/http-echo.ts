/** The built-in HTTP server (agent/builtins/http-echo.ts): the HTTP server where fortio is not installed. */
import { toolFacts } from './tool-facts.js';

export const httpEcho = toolFacts({
  name: 'http-echo',
  builtIn: true,
  server: { serves: 'http', port: 8080, servicePort: 80, singleThreaded: true },
});
