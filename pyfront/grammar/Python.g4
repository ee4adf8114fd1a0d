// The Python subset dkv reads (Python 3 statements and expressions as Pallas kernels use
// them). Action-free: INDENT and DEDENT are made by the token pass of pyfront/Parser.cpp from the lexer's
// tokens (it also drops NEWLINE inside brackets, blank and comment lines, and turns a
// line-initial `match` / `case` / `type` into the soft keywords MATCH / CASE / TYPE). No
// target code here.
grammar Python;

tokens { INDENT, DEDENT, MATCH, CASE, TYPE }

// ---------------------------------------------------------------- statements

file_input : stmt* EOF ;

stmt : simple_stmts | compound_stmt ;

simple_stmts : simple_stmt (';' simple_stmt)* ';'? NEWLINE ;

simple_stmt
  : 'pass'                                          # PassStmt
  | 'break'                                         # BreakStmt
  | 'continue'                                      # ContinueStmt
  | 'return' testlist_star?                         # ReturnStmt
  | 'raise' (test ('from' test)?)?                  # RaiseStmt
  | 'global' NAME (',' NAME)*                       # GlobalStmt
  | 'nonlocal' NAME (',' NAME)*                     # NonlocalStmt
  | 'del' exprlist                                  # DelStmt
  | 'assert' test (',' test)?                       # AssertStmt
  | 'import' dotted_as_name (',' dotted_as_name)*   # ImportStmt
  | 'from' ('.' | '...')* dotted_name? 'import' import_targets  # FromImportStmt
  | testlist_star annassign                         # AnnAssignStmt
  | testlist_star augassign (yield_expr | testlist_star)  # AugAssignStmt
  | testlist_star ('=' (yield_expr | testlist_star))*     # ExprOrAssignStmt
  | yield_expr ('=' (yield_expr | testlist_star))*        # YieldStmt
  | TYPE NAME type_params? '=' test                       # TypeAliasStmt
  ;

annassign : ':' test ('=' (yield_expr | testlist_star))? ;

augassign
  : '+=' | '-=' | '*=' | '@=' | '/=' | '%=' | '&=' | '|=' | '^=' | '<<=' | '>>='
  | '**=' | '//='
  ;

dotted_as_name : dotted_name ('as' NAME)? ;
dotted_name : NAME ('.' NAME)* ;
import_targets
  : '*'
  | '(' import_as_name (',' import_as_name)* ','? ')'
  | import_as_name (',' import_as_name)*
  ;
import_as_name : NAME ('as' NAME)? ;

compound_stmt
  : if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef | classdef
  | decorated | match_stmt
  ;

if_stmt : 'if' namedexpr_test ':' block elif_clause* else_clause? ;
elif_clause : 'elif' namedexpr_test ':' block ;
else_clause : 'else' ':' block ;
while_stmt : 'while' namedexpr_test ':' block else_clause? ;
for_stmt : ASYNC? 'for' exprlist 'in' testlist_star ':' block else_clause? ;
try_stmt
  : 'try' ':' block
    ( except_clause+ else_clause? finally_clause?
    | finally_clause )
  ;
except_clause : 'except' '*'? (test ('as' NAME)?)? ':' block ;
finally_clause : 'finally' ':' block ;
with_stmt
  : ASYNC? 'with' '(' with_item (',' with_item)* ','? ')' ':' block
  | ASYNC? 'with' with_item (',' with_item)* ':' block
  ;
with_item : test ('as' expr)? ;
funcdef : ASYNC? 'def' NAME type_params? '(' parameters? ')' ('->' test)? ':' block ;
parameters : param_item (',' param_item)* ','? ;
param_item
  : '/'                        # PosOnlyMarker
  | '*' tparam?                # StarParam
  | '**' tparam                # DoubleStarParam
  | tparam ('=' test)?         # PlainParam
  ;
tparam : NAME (':' test)? ;
classdef : 'class' NAME type_params? ('(' arglist? ')')? ':' block ;
// PEP 695 type parameters (Python 3.12), with PEP 696 defaults.
type_params : '[' type_param (',' type_param)* ','? ']' ;
type_param
  : NAME (':' test)? ('=' test)?    # TypeVarParam
  | '*' NAME ('=' test)?            # TypeVarTupleParam
  | '**' NAME ('=' test)?           # ParamSpecParam
  ;
decorated : decorator+ (classdef | funcdef) ;
decorator : '@' namedexpr_test NEWLINE ;

block : simple_stmts | NEWLINE INDENT stmt+ DEDENT ;

// match (soft keywords made by the token pass)
match_stmt : MATCH testlist_star ':' NEWLINE INDENT case_block+ DEDENT ;
case_block : CASE patterns ('if' namedexpr_test)? ':' block ;
patterns : pattern (',' pattern)* ','? ;
pattern : or_pattern ('as' NAME)? ;
or_pattern : closed_pattern ('|' closed_pattern)* ;
closed_pattern
  : '-'? NUMBER (('+' | '-') NUMBER)?                  # LiteralPattern
  | STRING+                                            # StringPattern
  | ('None' | 'True' | 'False')                        # SingletonPattern
  | '*' NAME                                           # StarPattern
  | NAME ('.' NAME)* '(' pattern_args? ')'             # ClassPattern
  | NAME '.' NAME ('.' NAME)*                          # ValuePattern
  | NAME                                               # CapturePattern
  | '(' patterns? ')'                                  # GroupPattern
  | '[' patterns? ']'                                  # SequencePattern
  | '{' (mapping_item (',' mapping_item)* ','?)? '}'   # MappingPattern
  ;
mapping_item : '**' NAME | closed_pattern ':' pattern ;
pattern_args : pattern_arg (',' pattern_arg)* ','? ;
pattern_arg : NAME '=' pattern | pattern ;

// ---------------------------------------------------------------- expressions

testlist_star : (test | star_expr) (',' (test | star_expr))* ','? ;
exprlist : (expr | star_expr) (',' (expr | star_expr))* ','? ;

namedexpr_test : test (':=' test)? ;
test : or_test ('if' or_test 'else' test)? | lambdef ;
test_nocond : or_test | lambdef_nocond ;
lambdef : 'lambda' lambda_params? ':' test ;
lambdef_nocond : 'lambda' lambda_params? ':' test_nocond ;
lambda_params : lambda_param (',' lambda_param)* ','? ;
lambda_param
  : '/'                        # LambdaPosOnlyMarker
  | '*' NAME?                  # LambdaStarParam
  | '**' NAME                  # LambdaDoubleStarParam
  | NAME ('=' test)?           # LambdaPlainParam
  ;

or_test : and_test ('or' and_test)* ;
and_test : not_test ('and' not_test)* ;
not_test : 'not' not_test | comparison ;
comparison : expr (comp_op expr)* ;
comp_op : '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not' ;
star_expr : '*' expr ;
expr : xor_expr ('|' xor_expr)* ;
xor_expr : and_expr ('^' and_expr)* ;
and_expr : shift_expr ('&' shift_expr)* ;
shift_expr : arith_expr (shift_op arith_expr)* ;
shift_op : '<<' | '>>' ;
arith_expr : term (arith_op term)* ;
arith_op : '+' | '-' ;
term : factor (term_op factor)* ;
term_op : '*' | '@' | '/' | '%' | '//' ;
factor : ('+' | '-' | '~') factor | power ;
power : atom_expr ('**' factor)? ;
atom_expr : AWAIT? atom trailer* ;
trailer
  : '(' arglist? ')'             # CallTrailer
  | '[' subscriptlist ']'        # SubscriptTrailer
  | '.' NAME                     # AttrTrailer
  ;
subscriptlist : subscript (',' subscript)* ','? ;
subscript
  : test? ':' test? (':' test?)?   # SliceSub
  | namedexpr_test                 # IndexSub
  | star_expr                      # StarSub
  ;
atom
  : '(' (yield_expr | testlist_comp)? ')'   # ParenAtom
  | '[' testlist_comp? ']'                  # ListAtom
  | '{' dictorsetmaker? '}'                 # BraceAtom
  | NAME                                    # NameAtom
  | NUMBER                                  # NumberAtom
  | STRING+                                 # StringAtom
  | '...'                                   # EllipsisAtom
  | 'None'                                  # NoneAtom
  | 'True'                                  # TrueAtom
  | 'False'                                 # FalseAtom
  ;
testlist_comp
  : (namedexpr_test | star_expr) comp_for
  | (namedexpr_test | star_expr) (',' (namedexpr_test | star_expr))* ','?
  ;
dictorsetmaker
  : dict_item comp_for
  | dict_item (',' dict_item)* ','?
  | (test | star_expr) comp_for
  | (test | star_expr) (',' (test | star_expr))* ','?
  ;
dict_item : test ':' test | '**' expr ;
arglist : argument (',' argument)* ','? ;
argument
  : NAME '=' test          # KeywordArg
  | '*' test               # StarArg
  | '**' test              # DoubleStarArg
  | namedexpr_test comp_for?   # PositionalArg
  ;
comp_for : ASYNC? 'for' exprlist 'in' or_test comp_iter* ;
comp_iter : comp_for | 'if' test_nocond ;
yield_expr : 'yield' ('from' test | testlist_star)? ;

// ---------------------------------------------------------------- lexer

ASYNC : 'async' ;
AWAIT : 'await' ;

NUMBER : IMAG_NUMBER | FLOAT_NUMBER | INTEGER ;
fragment INTEGER
  : [0-9] ('_'? [0-9])*   // leading zeros are rejected by the transformer, as CPython does
  | '0' [xX] ('_'? [0-9a-fA-F])+
  | '0' [oO] ('_'? [0-7])+
  | '0' [bB] ('_'? [01])+
  ;
fragment DIGITPART : [0-9] ('_'? [0-9])* ;
fragment POINTFLOAT : DIGITPART? '.' DIGITPART | DIGITPART '.' ;
fragment EXPONENT : [eE] [+-]? DIGITPART ;
fragment FLOAT_NUMBER : POINTFLOAT EXPONENT? | DIGITPART EXPONENT ;
fragment IMAG_NUMBER : (FLOAT_NUMBER | DIGITPART) [jJ] ;

// Strings: any prefix of r, u, b, f (checked by the transformer); \u0001 stands for any
// non-ASCII byte (pyfront/Parser.cpp keeps offsets byte-exact). An unterminated string
// does not match and its quote becomes ERROR_CHAR, which the token pass reports.
STRING : STRING_PREFIX? (LONG_STRING | SHORT_STRING) ;
fragment STRING_PREFIX : [rRuUbBfF] | [rR][bBfF] | [bBfF][rR] ;
fragment SHORT_STRING
  : '\'' (ESCAPE | ~[\\\r\n'])* '\''
  | '"' (ESCAPE | ~[\\\r\n"])* '"'
  ;
fragment LONG_STRING
  : '\'\'\'' (ESCAPE | ~'\\')*? '\'\'\''
  | '"""' (ESCAPE | ~'\\')*? '"""'
  ;
fragment ESCAPE : '\\' ('\r\n' | .) ;

NAME : [a-zA-Z_] [a-zA-Z_0-9]* ;

NEWLINE : '\r'? '\n' | '\r' ;
COMMENT : '#' ~[\r\n]* -> channel(HIDDEN) ;
WS : [ \t\f]+ -> skip ;
LINE_JOIN : '\\' ('\r'? '\n' | '\r') -> skip ;
// A UTF-8 byte order mark, replaced by \u0003 bytes before lexing.
BOM : '\u0003'+ -> skip ;
ERROR_CHAR : . ;
