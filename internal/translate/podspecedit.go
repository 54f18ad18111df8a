package translate
