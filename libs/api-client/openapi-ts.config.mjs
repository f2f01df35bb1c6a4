// How `npm run openapi` turns openapi.json into src/generated (see tools/openapi.mjs).
export default {
  input: 'libs/api-client/openapi.json',
  output: { path: 'libs/api-client/src/generated', importFileExtension: '.js' },
  plugins: ['@hey-api/client-fetch'],
  logs: { file: false, level: 'silent' },
};
