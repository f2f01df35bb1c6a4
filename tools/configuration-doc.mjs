// docs/configuration.md, made from the config classes each app checks its environment with
// (apps/*/src/config.ts, and the classes of libs/config/src they extend or load).
//   node tools/configuration-doc.mjs write   writes docs/configuration.md (npm run docs:config)
//   node tools/configuration-doc.mjs check   fails naming the entries that differ
// A variable's entry is its name, its default (the property's initializer), the values its
// decorators accept, which apps read it, and the property's JSDoc comment. An app reads a
// class's variables when its config class extends that class, or when its code imports a
// function of libs/config that checks that class alone (as loadSocketTimeouts does).
// apps/e2e/src/docs/configuration.spec.ts checks the page, the classes and .env.example agree.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { differencesByPart, formatPage, pageCommand } from './generated-page.mjs';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The page, from the repository's root. */
export const PAGE = 'docs/configuration.md';
const LIB = 'libs/config/src';
const LIB_PACKAGE = '@pgcloud/config';
// Headings of the shared classes' sections; a class not named here is titled by its name.
const SECTION_TITLES = {
  CommonEnv: 'Shared by every service',
  StorageEnv: 'Object storage',
  SocketTimeoutsEnv: 'HTTP socket timeouts',
};
// A property whose name is written like this is a variable; others (getters) are not.
const VARIABLE_NAME = /^[A-Z][A-Z0-9_]*$/;
// Files of an app that are not the app at run time.
const NOT_RUN = /\.(spec|int-spec|testing|int-fixtures)\.ts$/;

const INTRO = `Every setting is an environment variable with a default that works on one machine;
[\`.env.example\`](../.env.example) lists them all, and \`npm run up\` reads a \`.env\` file in the
checkout when there is one. A bad value stops the app at start with a message naming the
variable. Any setting may be given as \`<NAME>_FILE\` instead, the path of a file holding its
value (a Docker or Kubernetes secret), so that no secret sits in the app's environment;
setting both is refused.

Each app reads only the settings of its sections below: first those several apps share,
then each app's own. An entry gives the variable's default, the values the app accepts and
what it sets. A variable that several apps read has an entry in each of their sections,
with the same default.`;

const OUTRO = `## Other variables

Other programs read variables of their own: the \`pgcloud\` command line reads
\`PGCLOUD_TOKEN\`, \`PGCLOUD_API_URL\` and \`PGCLOUD_DAEMON_URL\` ([cli.md](cli.md)); the
tests, \`CHROMIUM_PATH\` and \`FUZZ_SEED\` ([Tests](development.md#tests)); the benchmarks,
\`BENCH_*\` ([bench/README.md](../bench/README.md)). The kubernetes driver reaches the
Kubernetes API as its client's defaults say: \`KUBECONFIG\`, \`~/.kube/config\`, else the
pod's ServiceAccount.`;

const read = (path) => readFileSync(join(root, path), 'utf8');
const parse = (path) => ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);

/** The anchor GitHub gives a heading (as apps/e2e/src/docs/links.spec.ts spells them). */
function slug(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Makes anchors unique in the order of the headings, as GitHub does. */
function anchorMaker() {
  const used = new Set();
  return (heading) => {
    const base = slug(heading);
    let anchor = base;
    for (let n = 1; used.has(anchor); n++) anchor = `${base}-${n}`;
    used.add(anchor);
    return anchor;
  };
}

/** The text of the JSDoc comment just before a node, on one line, or ''. */
function docOf(node) {
  const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).at(-1);
  return (ts.getTextOfJSDocComment(doc?.comment) ?? '').replace(/\s+/g, ' ').trim();
}

/** The initialisers of a file's top-level constants, by name. */
function constantsOf(source) {
  const constants = new Map();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations)
      if (ts.isIdentifier(declaration.name) && declaration.initializer)
        constants.set(declaration.name.text, declaration.initializer);
  }
  return constants;
}

/** The value of a constant expression (literals, arithmetic, the file's constants) or undefined. */
function evaluate(node, constants, depth = 0) {
  if (!node || depth > 20) return undefined;
  const again = (inner) => evaluate(inner, constants, depth + 1);
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) return again(node.expression);
  if (ts.isNumericLiteral(node)) return Number(node.text.replace(/_/g, ''));
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isRegularExpressionLiteral(node)) return { regex: node.text };
  if (ts.isIdentifier(node)) return again(constants.get(node.text));
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const value = again(node.operand);
    return typeof value === 'number' ? -value : undefined;
  }
  if (ts.isBinaryExpression(node)) {
    const [left, right] = [again(node.left), again(node.right)];
    if (typeof left !== 'number' || typeof right !== 'number') return undefined;
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken:
        return left * right;
      case ts.SyntaxKind.PlusToken:
        return left + right;
      case ts.SyntaxKind.MinusToken:
        return left - right;
      case ts.SyntaxKind.SlashToken:
        return left / right;
      default:
        return undefined;
    }
  }
  if (ts.isArrayLiteralExpression(node)) {
    const items = node.elements.map(again);
    return items.includes(undefined) ? undefined : items;
  }
  if (ts.isObjectLiteralExpression(node)) {
    const object = {};
    for (const property of node.properties)
      if (ts.isPropertyAssignment(property) && !ts.isComputedPropertyName(property.name))
        object[property.name.text] = again(property.initializer);
    return object;
  }
  return undefined;
}

/** `NAME=value` for a ValidateIf whose condition is `config.NAME === 'value'`, else its source. */
function conditionOf(node, constants) {
  const fn = ts.isIdentifier(node) ? constants.get(node.text) : node;
  const body = fn && (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) ? fn.body : undefined;
  if (
    body &&
    ts.isBinaryExpression(body) &&
    body.operatorToken.kind === ts.SyntaxKind.EqualsEqualsEqualsToken &&
    ts.isPropertyAccessExpression(body.left) &&
    ts.isStringLiteral(body.right)
  )
    return `\`${body.left.name.text}=${body.right.text}\``;
  return `\`${node.getText()}\``;
}

const mustBe = (message) => String(message).replace(/^must be /, '');

/** What a property's class-validator decorators accept, in words, and what they say of it. */
function rulesOf(property, constants) {
  let kind;
  let min;
  let max;
  let condition;
  let required = false;
  let notEmpty = false;
  let optional = false;
  const rules = [];
  for (const decorator of ts.getDecorators(property) ?? []) {
    const call = decorator.expression;
    if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) {
      rules.push(`\`${decorator.getText()}\``);
      continue;
    }
    const [first, second] = call.arguments;
    const value = (node) => evaluate(node, constants);
    const message = (node) => value(node)?.message;
    switch (call.expression.text) {
      case 'IsInt':
        kind = 'an integer';
        break;
      case 'IsNumber':
        kind = 'a number';
        break;
      case 'Min':
        min = value(first);
        break;
      case 'Max':
        max = value(first);
        break;
      case 'IsIn':
        rules.push(`one of ${(value(first) ?? []).map((item) => `\`${item}\``).join(', ')}`);
        break;
      case 'IsBoolean':
        rules.push('`true` or `false`');
        break;
      case 'Matches':
        rules.push(message(second) ? mustBe(message(second)) : `matching \`${first.getText()}\``);
        break;
      case 'IsUrl': {
        const protocols = value(first)?.protocols;
        const url = protocols
          ? `an ${protocols.map((protocol) => `\`${protocol}://\``).join(' or ')} URL`
          : 'a URL';
        rules.push(message(second) ? mustBe(message(second)) : url);
        break;
      }
      case 'IsIP':
        rules.push(message(second) ? mustBe(message(second)) : 'an IP address');
        break;
      case 'Length':
        rules.push(`${value(first)}-${value(second)} characters`);
        break;
      case 'ValidateIf':
        condition = conditionOf(first, constants);
        break;
      case 'IsDefined':
        required = true;
        break;
      case 'IsNotEmpty':
        notEmpty = true;
        break;
      case 'IsOptional':
        optional = true;
        break;
      // Every value is a string; custom rules and conversions are told by the comment.
      case 'IsString':
      case 'ValidateBy':
      case 'Transform':
        break;
      default:
        rules.push(`\`${decorator.getText()}\``);
    }
  }
  // An empty value counts as unset (libs/config/src/validate-env.ts): IsNotEmpty says more
  // than that only under a condition.
  if (notEmpty && condition) required = true;
  const range =
    min !== undefined && max !== undefined
      ? `${min}-${max}`
      : min !== undefined
        ? `at least ${min}`
        : max !== undefined
          ? `at most ${max}`
          : undefined;
  const number = [kind, range].filter(Boolean).join(', ');
  const all = [...(required ? ['required'] : []), ...(number ? [number] : []), ...rules];
  const values =
    all.length > 0 && condition ? `with ${condition}: ${all.join('; ')}` : all.join('; ');
  return { values, optional };
}

/** One variable of a config class. */
function variableOf(property, constants) {
  const name = property.name.text;
  const { values, optional } = rulesOf(property, constants);
  const initializer = property.initializer;
  const value = evaluate(initializer, constants);
  let text;
  if (!initializer) text = optional || property.questionToken ? 'unset' : 'none (required)';
  else if (value === '') text = 'empty';
  else if (['string', 'number', 'boolean'].includes(typeof value)) {
    const literal =
      ts.isStringLiteral(initializer) ||
      ts.isNumericLiteral(initializer) ||
      [ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword].includes(initializer.kind);
    text = `\`${value}\`${literal ? '' : ` (\`${initializer.getText()}\`)`}`;
  } else text = `\`${initializer.getText()}\``;
  return {
    name,
    doc: docOf(property),
    /** The default as the environment would give it, or undefined when there is none. */
    default: ['string', 'number', 'boolean'].includes(typeof value) ? String(value) : undefined,
    defaultText: text,
    values,
  };
}

/** The names of the classes an `extends` clause names, a mixin's arguments included. */
function namesIn(node) {
  if (ts.isIdentifier(node)) return [node.text];
  if (ts.isExpressionWithTypeArguments(node)) return namesIn(node.expression);
  if (ts.isCallExpression(node)) return node.arguments.flatMap(namesIn);
  return [];
}

/** The classes of a file that hold variables, and the functions that check one class alone. */
function classesOf(path, app) {
  const source = parse(path);
  const constants = constantsOf(source);
  const classes = [];
  const loaders = [];
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && statement.body) {
      const checked = /\bvalidateEnv\(\s*(\w+)/.exec(statement.body.getText())?.[1];
      if (checked) loaders.push({ name: statement.name.text, className: checked });
    }
    if (!ts.isClassDeclaration(statement) || !statement.name) continue;
    const properties = statement.members.filter(
      (member) =>
        ts.isPropertyDeclaration(member) &&
        ts.isIdentifier(member.name) &&
        VARIABLE_NAME.test(member.name.text) &&
        !member.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword),
    );
    if (properties.length === 0) continue;
    const bases = (statement.heritageClauses ?? [])
      .filter((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)
      .flatMap((clause) => clause.types.flatMap(namesIn));
    classes.push({
      name: statement.name.text,
      path,
      app,
      doc: docOf(statement),
      bases,
      variables: properties.map((property) => variableOf(property, constants)),
    });
  }
  return { classes, loaders };
}

/** Files under a folder of the repository, by path from its root. */
function filesUnder(folder) {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length).replaceAll('\\', '/'))
    .map((path) => path.replace(/^\//, ''))
    .sort();
}

/** The names a file imports from libs/config. */
function importsFromLib(path) {
  const names = [];
  for (const statement of parse(path).statements) {
    if (
      !ts.isImportDeclaration(statement) ||
      statement.moduleSpecifier.text !== LIB_PACKAGE ||
      !statement.importClause?.namedBindings ||
      !ts.isNamedImports(statement.importClause.namedBindings)
    )
      continue;
    for (const element of statement.importClause.namedBindings.elements)
      names.push((element.propertyName ?? element.name).text);
  }
  return names;
}

const listed = (names) =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;

/**
 * The config classes and which apps read their variables, as the page's sections: the
 * shared classes of libs/config (in the order its index exports them), then each app's.
 */
export function configuration() {
  const libFiles = [...read(`${LIB}/index.ts`).matchAll(/from '\.\/([\w-]+)\.js'/g)].map(
    ([, name]) => `${LIB}/${name}.ts`,
  );
  const lib = libFiles.map((path) => classesOf(path, undefined));
  const apps = readdirSync(join(root, 'apps'))
    .filter((app) => existsSync(join(root, 'apps', app, 'src', 'config.ts')))
    .sort();
  const appClasses = apps.flatMap((app) => classesOf(`apps/${app}/src/config.ts`, app).classes);
  const libClasses = lib.flatMap((file) => file.classes);
  const classes = new Map([...libClasses, ...appClasses].map((cls) => [cls.name, cls]));
  const loaders = lib.flatMap((file) => file.loaders);

  // What each app checks: its config class, and the classes of the loaders it imports.
  const checked = apps.map((app) => {
    const imported = new Set(
      filesUnder(`apps/${app}/src`)
        .filter((path) => path.endsWith('.ts') && !NOT_RUN.test(path))
        .flatMap(importsFromLib),
    );
    const loaded = loaders.filter((loader) => imported.has(loader.name));
    return {
      app,
      roots: [
        ...appClasses.filter((cls) => cls.app === app),
        ...loaded.map((loader) => classes.get(loader.className)).filter(Boolean),
      ],
    };
  });
  // A variable is read from the nearest class declaring it: an app's own, then its bases'.
  const readers = new Map(); // `Class.NAME` -> apps
  for (const { app, roots } of checked)
    for (const rootClass of roots) {
      const seen = new Set();
      const lineage = [];
      const walk = (cls) => {
        if (!cls || lineage.includes(cls)) return;
        lineage.push(cls);
        cls.bases.forEach((base) => walk(classes.get(base)));
      };
      walk(rootClass);
      for (const cls of lineage)
        for (const variable of cls.variables) {
          if (seen.has(variable.name)) continue;
          seen.add(variable.name);
          const key = `${cls.name}.${variable.name}`;
          readers.set(key, [...new Set([...(readers.get(key) ?? []), app])].sort());
        }
    }

  const sections = [...libClasses, ...appClasses].map((cls) => {
    const variables = cls.variables.map((variable) => ({
      ...variable,
      className: cls.name,
      apps: readers.get(`${cls.name}.${variable.name}`) ?? [],
    }));
    return {
      title: cls.app ?? SECTION_TITLES[cls.name] ?? cls.name,
      className: cls.name,
      path: cls.path,
      app: cls.app,
      doc: cls.doc,
      apps: [...new Set(variables.flatMap((variable) => variable.apps))].sort(),
      variables,
    };
  });
  return { sections, variables: sections.flatMap((section) => section.variables) };
}

/** The headings of a Markdown file, by anchor. */
function headingsOf(path) {
  const anchor = anchorMaker();
  const headings = new Map();
  let fenced = false;
  for (const line of read(path).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? undefined : /^(#{1,6})\s+(.*?)\s*#*$/.exec(line);
    if (heading) headings.set(anchor(heading[2]), { level: heading[1].length, text: heading[2] });
  }
  return headings;
}

/** A link from the page to a docs page a comment names (`docs/api/errors.md#rate-limits`). */
function docsLink(path, anchor) {
  const headings = existsSync(join(root, path)) ? headingsOf(path) : new Map();
  const heading = anchor
    ? headings.get(anchor)
    : [...headings.values()].find((found) => found.level === 1);
  const target = `${path.replace(/^docs\//, '')}${anchor ? `#${anchor}` : ''}`;
  return `[${heading?.text ?? `docs/${target}`}](${target})`;
}

// In a comment's words: a docs page it names, a variable's name (with a value or a path
// after it), a field such as retention_days, a URL or a scheme.
const TOKEN = new RegExp(
  [
    /(?<![\w/.])(docs\/[\w./-]+\.md)(?:#([\w-]+))?/,
    /(?<![\w`$<])([A-Z][A-Z0-9]*(?:(?:_[A-Z0-9]+)+(?:_\*)?|_\*)(?:[=/][\w.:/=-]*[\w/])?)/,
    /(?<![\w`$/.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?!\w)/,
    /(?<![\w`])([a-z][a-z0-9+.-]*:\/\/(?:[^\s`)]*[\w/])?)/,
  ]
    .map((pattern) => pattern.source)
    .join('|'),
  'g',
);

/**
 * A comment as Markdown: names and URLs as code, docs pages as links (from docs/). `names`:
 * the variables, so that one without an underscore (REGIONS) is code too.
 */
function prose(text, names) {
  const word = new RegExp(`(?<![\\w\`$])(${[...names].join('|')})(?![\\w\`])`, 'g');
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part
            .replace(TOKEN, (match, page, anchor, name, field, url) =>
              page ? docsLink(page, anchor) : `\`${name ?? field ?? url}\``,
            )
            .split(/(`[^`]*`|\[[^\]]*\]\([^)]*\))/)
            .map((piece, at) => (at % 2 === 1 ? piece : piece.replace(word, '`$1`')))
            .join(''),
    )
    .join('');
}

/** The page's Markdown before formatting. */
function markdown() {
  const { sections, variables } = configuration();
  const names = new Set(variables.map((variable) => variable.name));
  const words = (text) => prose(text, names);
  const anchor = anchorMaker();
  anchor('Configuration');
  for (const section of sections) {
    section.anchor = anchor(section.title);
    for (const variable of section.variables) variable.anchor = anchor(`\`${variable.name}\``);
  }
  const entries = new Map(); // NAME -> its entries, in the page's order
  for (const section of sections)
    for (const variable of section.variables)
      entries.set(variable.name, [...(entries.get(variable.name) ?? []), variable]);

  const lines = ['# Configuration', ''];
  lines.push(
    '<!-- Made by tools/configuration-doc.mjs from the config classes: change their comments,',
    'then run `npm run docs:config`. -->',
    '',
  );
  lines.push(INTRO, '');
  for (const section of sections) lines.push(`- [${section.title}](#${section.anchor})`);
  lines.push('');
  for (const section of sections) {
    lines.push(`## ${section.title}`, '');
    const source = `[\`${section.className}\`](../${section.path})`;
    if (section.app) {
      const shared = sections.filter((other) => !other.app && other.apps.includes(section.app));
      const also = shared.map((other) => `[${other.title}](#${other.anchor})`);
      lines.push(
        `What ${section.app} reads` +
          (also.length > 0 ? ` besides ${listed(also)}` : '') +
          `: the settings of ${source}.`,
        '',
      );
    } else {
      lines.push(`${words(section.doc)} Read by ${listed(section.apps)} (${source}).`.trim(), '');
    }
    for (const variable of section.variables) {
      lines.push(`### \`${variable.name}\``, '');
      if (variable.doc) lines.push(words(variable.doc), '');
      lines.push(`- default: ${variable.defaultText}`);
      if (variable.values) lines.push(`- values: ${words(variable.values)}`);
      const sectionApps = section.app ? [section.app] : section.apps;
      if (variable.apps.join() !== sectionApps.join())
        lines.push(`- read by: ${variable.apps.length > 0 ? variable.apps.join(', ') : 'none'}`);
      const others = (entries.get(variable.name) ?? [])
        .filter((other) => other !== variable)
        .flatMap((other) =>
          other.apps
            .filter((app) => !variable.apps.includes(app))
            .map((app) => ({ app, anchor: other.anchor })),
        )
        .sort((a, b) => a.app.localeCompare(b.app));
      if (others.length > 0)
        lines.push(
          `- also read by: ${others.map((other) => `[${other.app}](#${other.anchor})`).join(', ')}`,
        );
      lines.push('');
    }
  }
  lines.push(OUTRO, '');
  return lines.join('\n');
}

/** The page as the config classes makes it today, formatted as prettier --check wants it. */
export function renderPage() {
  return formatPage(PAGE, markdown());
}

/** A Markdown page's parts by heading (`section › heading`), each with its text. */
function partsOf(text) {
  const parts = new Map();
  let section = '(top)';
  let key = section;
  for (const line of text.split('\n')) {
    const heading = /^(##+)\s+(.*)$/.exec(line);
    if (heading) {
      if (heading[1] === '##') section = heading[2];
      key = heading[1] === '##' ? section : `${section} › ${heading[2]}`;
    }
    parts.set(key, `${parts.get(key) ?? ''}${line}\n`);
  }
  return parts;
}

/** What differs between the page as made and as found, one line per heading. */
export function pageDifferences(expected, actual) {
  return differencesByPart(expected, actual, partsOf, 'not in the classes');
}

await pageCommand(import.meta.url, {
  page: PAGE,
  render: renderPage,
  differences: pageDifferences,
  source: 'the config classes',
  remedy: 'Run `npm run docs:config` and commit the page with the change.',
});
