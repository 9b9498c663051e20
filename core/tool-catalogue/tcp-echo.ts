/** The built-in TCP request/response server (agent/builtins/tcp-echo.ts) that tcp-rr and the disruption probe stream measure against. */
import { toolFacts } from './tool-facts.js';

export const tcpEcho = toolFacts({
  name: 'tcp-echo',
  builtIn: true,
  server: { serves: 'rr', alsoServes: ['disruption'], port: 8079, servicePort: 8079, singleThreaded: true },
});
