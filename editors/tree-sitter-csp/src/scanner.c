// External scanner for csp: automatic semicolons and string text.
//
// The real lexer (src/syntax/lexer.rs) inserts ";" at a newline when the
// line's last token can end a statement, unless the next line starts with "."
// (a method chain continued). The parser only asks for an automatic semicolon
// where a statement could end, so here it suffices to check that a newline
// (possibly inside or after comments) comes before the next token and that the
// next token is not a lone ".". The token is zero-width: comments after the
// statement are left for the parser's extras.

#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>

enum TokenType {
  AUTOMATIC_SEMICOLON,
  STRING_CONTENT,
  ERROR_SENTINEL,
};

void *tree_sitter_csp_external_scanner_create(void) { return NULL; }
void tree_sitter_csp_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_csp_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}
void tree_sitter_csp_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

static void skip(TSLexer *lexer) { lexer->advance(lexer, true); }
static void advance(TSLexer *lexer) { lexer->advance(lexer, false); }

// Skips blanks and comments; sets *newline if a line break was crossed.
// Returns false on an unterminated block comment or a "/" that starts no
// comment (the lexer is then just past that "/").
static bool skip_space(TSLexer *lexer, bool *newline, bool *slash) {
  for (;;) {
    if (lexer->eof(lexer)) return true;
    int32_t c = lexer->lookahead;
    if (c == '\n') {
      *newline = true;
      skip(lexer);
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      skip(lexer);
    } else if (c == '/') {
      advance(lexer);
      if (lexer->lookahead == '/') {
        while (!lexer->eof(lexer) && lexer->lookahead != '\n') advance(lexer);
      } else if (lexer->lookahead == '*') {
        advance(lexer);
        for (;;) {
          if (lexer->eof(lexer)) return false;
          if (lexer->lookahead == '\n') *newline = true;
          if (lexer->lookahead == '*') {
            advance(lexer);
            if (lexer->lookahead == '/') {
              advance(lexer);
              break;
            }
          } else {
            advance(lexer);
          }
        }
      } else {
        *slash = true;
        return false;
      }
    } else {
      return true;
    }
  }
}

static bool scan_automatic_semicolon(TSLexer *lexer) {
  lexer->result_symbol = AUTOMATIC_SEMICOLON;
  lexer->mark_end(lexer);
  bool newline = false, slash = false;
  if (!skip_space(lexer, &newline, &slash)) return newline && slash;
  if (lexer->eof(lexer)) return true;
  if (!newline) return false;
  if (lexer->lookahead == '.') {
    advance(lexer);
    return lexer->lookahead == '.';
  }
  return true;
}

// String text up to a quote, a backslash or "${".
static bool scan_string_content(TSLexer *lexer) {
  lexer->result_symbol = STRING_CONTENT;
  bool any = false;
  for (;;) {
    if (lexer->eof(lexer)) break;
    int32_t c = lexer->lookahead;
    if (c == '"' || c == '\\') break;
    if (c == '$') {
      lexer->mark_end(lexer);
      advance(lexer);
      if (lexer->lookahead == '{') return any;
      any = true;
      continue;
    }
    advance(lexer);
    any = true;
  }
  lexer->mark_end(lexer);
  return any;
}

bool tree_sitter_csp_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid_symbols) {
  (void)payload;
  // Error recovery asks for every token at once: leave it to the internal lexer.
  if (valid_symbols[ERROR_SENTINEL]) return false;
  if (valid_symbols[STRING_CONTENT]) return scan_string_content(lexer);
  if (valid_symbols[AUTOMATIC_SEMICOLON]) return scan_automatic_semicolon(lexer);
  return false;
}
