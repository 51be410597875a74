# Turns a text file into a C string constant: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ ${IN} text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE ${OUT} "/* Generated from ${IN} by embed.cmake: do not edit. */\nconst char ${NAME}[] =\n\"${text}\";\n")
