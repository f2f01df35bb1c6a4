import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// The packages tests run on: helpers (libs/testing), the development stack (libs/devstack)
// and the Kubernetes stand-ins (libs/kube-stand-in). An app's own code imports none of them;
// its specs and their fixtures may (docs/development.md#layout).
const TEST_PACKAGES = ['type:testing', 'type:devstack', 'type:kube-stand-in'];
const APP_TEST_FILES = [
  'apps/**/*.spec.ts',
  'apps/**/*.int-spec.ts',
  'apps/**/*.fixture.ts',
  'apps/**/*.int-fixtures.ts',
  'apps/**/*.testing.ts',
  // The conformance suite that both drivers' int-specs run.
  'apps/database-provisioner/src/drivers/conformance/**/*.ts',
];

/** The rule, with what an app's files may import beside contracts and libs. */
function moduleBoundaries(appsMayUse) {
  return [
    'error',
    {
      enforceBuildableLibDependency: false,
      allow: [],
      depConstraints: [
        { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
        { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:contracts', 'type:lib'] },
        { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:contracts', 'type:lib'] },
        {
          sourceTag: 'type:devstack',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:lib', 'type:testing'],
        },
        {
          sourceTag: 'type:kube-stand-in',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:lib', 'type:testing'],
        },
        {
          sourceTag: 'type:bench-support',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:lib', 'type:testing', 'type:devstack'],
        },
        {
          sourceTag: 'type:app',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:lib', ...appsMayUse],
        },
        {
          sourceTag: 'type:e2e',
          onlyDependOnLibsWithTags: ['type:contracts', 'type:lib', ...TEST_PACKAGES],
        },
        {
          sourceTag: 'type:bench',
          onlyDependOnLibsWithTags: [
            'type:contracts',
            'type:lib',
            'type:testing',
            'type:devstack',
            'type:bench-support',
          ],
        },
      ],
    },
  ];
}

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.data/**',
      '.nx/**',
      'libs/api-client/src/generated/**',
    ],
  },
  ...nx.configs['flat/base'],
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        // Nest injects by the types decorator metadata names: such imports must stay values.
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
      },
    },
    rules: {
      '@nx/enforce-module-boundaries': moduleBoundaries([]),
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'separate-type-imports' },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    files: APP_TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': moduleBoundaries(TEST_PACKAGES) },
  },
  {
    // Messages: a handler answers a catalogue declaration (@Handles, which checks that its
    // @MessageBody() is the declared class) and calls go through RpcClient, typed by the
    // declaration; the raw pieces stay inside libs/messaging.
    files: ['apps/**/*.ts', 'bench/**/*.ts'],
    ignores: ['apps/e2e/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@nestjs/microservices',
              importNames: ['MessagePattern', 'EventPattern', 'Payload', 'ClientProxy'],
              message: 'Answer a catalogue declaration with @Handles from @pgcloud/messaging.',
            },
            {
              name: '@pgcloud/messaging',
              importNames: ['ServiceClient'],
              message: 'Call services through RpcClient, typed by the catalogue declaration.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
