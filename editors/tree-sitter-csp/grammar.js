/**
 * @file Tree-sitter grammar for csp, a scripting language with Go-style concurrency.
 *
 * Mirrors grammar/csp.lalrpop and the lexer in src/syntax/lexer.rs. The real
 * lexer turns a newline into ";" when the line's last token can end a
 * statement (Go's rule) unless the next line starts with "."; here the
 * external scanner (src/scanner.c) emits a zero-width `_automatic_semicolon`
 * at a newline wherever the parser could end a statement, which accepts the
 * same programs.
 *
 * Where the real grammar uses modes (no map literal and no `go { }`
 * expression at the start of a statement, no map after `wait`), this grammar
 * is more permissive and resolves the overlaps with precedence: a `{` that
 * could open a block or a map opens a block.
 */

/* eslint-disable arrow-parens, camelcase */

const PREC = {
  lambda: -2,
  yield: -1,
  conditional: 1,
  or: 2,
  and: 3,
  compare: 4,
  range: 5,
  bitor: 6,
  bitxor: 7,
  bitand: 8,
  shift: 9,
  add: 10,
  mul: 11,
  unary: 12,
  power: 13,
  postfix: 14,
};

const KEYWORDS = [
  'let', 'fn', 'return', 'if', 'else', 'while', 'for', 'in', 'is', 'not',
  'break', 'continue', 'go', 'chan', 'select', 'case', 'default', 'lock',
  'wait', 'yield', 'try', 'catch', 'finally', 'throw', 'import', 'as',
];

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));
const commaSep = (rule) => optional(seq(commaSep1(rule), optional(',')));

module.exports = grammar({
  name: 'csp',

  word: $ => $.identifier,

  extras: $ => [/\s/, $.comment],

  externals: $ => [
    $._automatic_semicolon,
    $.string_content,
    $._error_sentinel,
  ],

  supertypes: $ => [$._expression, $._statement],

  rules: {
    source_file: $ => seq(
      optional($.shebang),
      repeat($._statement_item),
      optional($._simple_statement),
    ),

    shebang: _ => token(prec(1, /#![^\n]*/)),

    // ------------------------------------------------------------ statements

    // A simple statement needs a terminator unless it is the last of its
    // list; a statement that ends with its block's `}` needs none, but takes
    // one (as the real lexer puts a ";" after a `}` at the end of a line).
    // Accepting a terminator there also lets `{}` at the start of a statement
    // be a block rather than a map followed by a terminator.
    _statement_item: $ => choice(
      seq($._simple_statement, $._terminator),
      seq($._block_statement, optional($._automatic_semicolon)),
      ';',
    ),

    _terminator: $ => choice(';', $._automatic_semicolon),

    _statement: $ => choice($._simple_statement, $._block_statement),

    _simple_statement: $ => choice(
      $.let_declaration,
      $.assignment_statement,
      $.send_statement,
      $.expression_statement,
      $.break_statement,
      $.continue_statement,
      $.return_statement,
      $.throw_statement,
      $.import_statement,
    ),

    _block_statement: $ => choice(
      $.function_declaration,
      $.if_statement,
      $.while_statement,
      $.for_statement,
      $.try_statement,
      $.block,
      $.select_statement,
      $.lock_statement,
      $.wait_statement,
      prec(1, $.go_block),
    ),

    block: $ => prec(1, seq(
      '{',
      repeat($._statement_item),
      optional($._simple_statement),
      '}',
    )),

    let_declaration: $ => seq(
      'let',
      commaSep1(field('name', $.identifier)),
      '=',
      field('value', $._expression),
    ),

    assignment_statement: $ => seq(
      field('left', $._expression),
      field('operator', choice('=', '+=', '-=', '*=', '/=', '%=', '**=')),
      field('right', $._expression),
    ),

    send_statement: $ => seq(
      field('channel', $._expression),
      '<-',
      field('value', $._expression),
    ),

    expression_statement: $ => $._expression,

    break_statement: _ => 'break',
    continue_statement: _ => 'continue',

    return_statement: $ => prec.right(seq('return', optional($._expression))),

    throw_statement: $ => seq('throw', $._expression),

    import_statement: $ => seq(
      'import',
      field('source', $.string),
      optional(seq('as', field('alias', $.identifier))),
    ),

    function_declaration: $ => seq(
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameters),
      field('body', $.block),
    ),

    parameters: $ => seq(
      '(',
      commaSep(choice($.parameter, $.rest_parameter)),
      ')',
    ),

    parameter: $ => seq(
      field('name', $.identifier),
      optional(seq('=', field('default', $._expression))),
    ),

    rest_parameter: $ => seq('...', field('name', $.identifier)),

    if_statement: $ => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      optional(seq('else', field('alternative', choice($.block, $.if_statement)))),
    ),

    while_statement: $ => seq(
      'while',
      field('condition', $._expression),
      field('body', $.block),
    ),

    for_statement: $ => seq(
      'for',
      optional(seq(field('key', $.identifier), ',')),
      field('variable', $.identifier),
      'in',
      field('iterable', $._expression),
      field('body', $.block),
    ),

    try_statement: $ => seq(
      'try',
      field('body', $.block),
      choice(
        seq($.catch_clause, optional($.finally_clause)),
        $.finally_clause,
      ),
    ),

    catch_clause: $ => seq(
      'catch',
      optional(field('name', $.identifier)),
      field('body', $.block),
    ),

    finally_clause: $ => seq('finally', field('body', $.block)),

    select_statement: $ => seq(
      'select',
      '{',
      repeat(choice($.select_case, $.default_case, ';')),
      '}',
    ),

    select_case: $ => seq(
      'case',
      choice(
        seq(commaSep1(field('name', $.identifier)), '=', field('receive', $.receive_expression)),
        field('receive', $.receive_expression),
        seq(field('channel', $._expression), '<-', field('value', $._expression)),
      ),
      field('body', $.block),
    ),

    default_case: $ => seq('default', field('body', $.block)),

    lock_statement: $ => seq(
      'lock',
      field('mutex', $._expression),
      field('body', $.block),
    ),

    wait_statement: $ => seq('wait', field('body', $.block)),

    // ----------------------------------------------------------- expressions

    _expression: $ => choice(
      $.lambda,
      $.yield_expression,
      $.conditional_expression,
      $.binary_expression,
      $.range_expression,
      $.unary_expression,
      $.receive_expression,
      $.wait_expression,
      $.go_expression,
      $.go_block,
      $.call_expression,
      $.member_expression,
      $.index_expression,
      $.parenthesized_expression,
      $.identifier,
      alias('chan', $.identifier),
      $.integer,
      $.float,
      $.string,
      $.true,
      $.false,
      $.nil,
      $.list,
      $.list_comprehension,
      $.map,
      $.function_expression,
    ),

    lambda: $ => prec.right(PREC.lambda, seq(
      'fn',
      field('parameters', $.parameters),
      '=>',
      field('body', $._expression),
    )),

    function_expression: $ => seq(
      'fn',
      field('parameters', $.parameters),
      field('body', $.block),
    ),

    yield_expression: $ => prec.right(PREC.yield, seq('yield', optional($._expression))),

    conditional_expression: $ => prec.right(PREC.conditional, seq(
      field('condition', $._expression),
      '?',
      field('consequence', $._expression),
      ':',
      field('alternative', $._expression),
    )),

    binary_expression: $ => {
      const table = [
        [PREC.or, '||'],
        [PREC.and, '&&'],
        [PREC.compare, choice('==', '!=', '<', '<=', '>', '>=', 'in', seq('not', 'in'), 'is', seq('is', 'not'))],
        [PREC.bitor, '|'],
        [PREC.bitxor, '^'],
        [PREC.bitand, '&'],
        [PREC.shift, choice('<<', '>>')],
        [PREC.add, choice('+', '-')],
        [PREC.mul, choice('*', '/', '%')],
      ];
      const operands = op => seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      );
      // `**` is right-associative and binds tighter than a prefix `-`.
      return choice(...table.map(([p, op]) => prec.left(p, operands(op))), prec.right(PREC.power, operands('**')));
    },

    range_expression: $ => prec.left(PREC.range, seq(
      field('start', $._expression),
      field('operator', choice('..', '..=')),
      field('end', $._expression),
    )),

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('-', '!', '~')),
      field('operand', $._expression),
    )),

    receive_expression: $ => prec(PREC.unary, seq('<-', field('channel', $._expression))),

    wait_expression: $ => prec(PREC.unary, seq('wait', field('operand', $._expression))),

    go_expression: $ => prec(PREC.unary, seq('go', field('call', $._expression))),

    go_block: $ => seq('go', field('body', $.block)),

    call_expression: $ => prec(PREC.postfix, seq(
      field('function', $._expression),
      field('arguments', $.arguments),
    )),

    arguments: $ => seq('(', commaSep($._expression), ')'),

    member_expression: $ => prec(PREC.postfix, seq(
      field('object', $._expression),
      '.',
      field('property', alias($.identifier, $.property_identifier)),
    )),

    index_expression: $ => prec(PREC.postfix, seq(
      field('object', $._expression),
      '[',
      field('index', $._expression),
      ']',
    )),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    list: $ => seq('[', commaSep($._expression), ']'),

    list_comprehension: $ => seq(
      '[',
      field('body', $._expression),
      'for',
      optional(seq(field('key', $.identifier), ',')),
      field('variable', $.identifier),
      'in',
      field('iterable', $._expression),
      optional(seq('if', field('condition', $._expression))),
      ']',
    ),

    // A newline after the last entry becomes a ";", allowed before "}" (but
    // not after a trailing comma, where the newline is no terminator).
    map: $ => seq(
      '{',
      optional(seq(commaSep1($.pair), optional(choice(',', $._terminator)))),
      '}',
    ),

    pair: $ => seq(
      field('key', choice(
        alias($.identifier, $.property_identifier),
        alias(choice(...KEYWORDS), $.property_identifier),
        $.string,
        $.integer,
        $.true,
        $.false,
        $.nil,
        $.computed_key,
        $.parenthesized_expression,
      )),
      ':',
      field('value', $._expression),
    ),

    computed_key: $ => seq('[', $._expression, ']'),

    // --------------------------------------------------------------- tokens

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence, $.interpolation)),
      token.immediate('"'),
    ),

    escape_sequence: _ => token.immediate(seq('\\', choice(/u\{[0-9a-fA-F]*\}/, /[^u]/))),

    interpolation: $ => seq(token.immediate('${'), $._expression, '}'),

    integer: _ => token(choice(
      /0[xX][0-9a-fA-F_]+/,
      /0[bB][01_]+/,
      /[0-9][0-9_]*/,
    )),

    float: _ => token(choice(
      /[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9_]*)?/,
      /[0-9][0-9_]*[eE][+-]?[0-9_]+/,
    )),

    true: _ => 'true',
    false: _ => 'false',
    nil: _ => 'nil',

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    comment: _ => token(choice(
      seq('//', /[^\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});
