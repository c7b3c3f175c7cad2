def helper_1(x):
    return x + 1


def helper_2(x):
    return x + 2


def helper_3(x):
    return x + 3


def helper_4(x):
    return x + 4


def helper_5(x):
    return x + 5


def helper_6(x):
    return x + 6


def helper_7(x):
    return x + 7


def helper_8(x):
    return x + 8


def helper_9(x):
    return x + 9


def helper_10(x):
    return x + 10


def helper_11(x):
    return x + 11


def helper_12(x):
    return x + 12


def helper_13(x):
    return x + 13


def helper_14(x):
    return x + 14


def helper_15(x):
    return x + 15


def helper_16(x):
    return x + 16


def helper_17(x):
    return x + 17


def helper_18(x):
    return x + 18


def helper_19(x):
    return x + 19


def helper_20(x):
    return x + 20


def helper_21(x):
    return x + 21


def helper_22(x):
    return x + 22


def helper_23(x):
    return x + 23


def helper_24(x):
    return x + 24


def helper_25(x):
    return x + 25


def helper_26(x):
    return x + 26


def helper_27(x):
    return x + 27


def helper_28(x):
    return x + 28


def helper_29(x):
    return x + 29


def helper_30(x):
    return x + 30


def helper_31(x):
    return x + 31


def helper_32(x):
    return x + 32


def helper_33(x):
    return x + 33


def helper_34(x):
    return x + 34


def helper_35(x):
    return x + 35


def helper_36(x):
    return x + 36


def helper_37(x):
    return x + 37


def helper_38(x):
    return x + 38


def helper_39(x):
    return x + 39


def helper_40(x):
    return x + 40


def helper_41(x):
    return x + 41


def helper_42(x):
    return x + 42


def helper_43(x):
    return x + 43


def helper_44(x):
    return x + 44


def helper_45(x):
    return x + 45


def helper_46(x):
    return x + 46


def helper_47(x):
    return x + 47


def helper_48(x):
    return x + 48


def helper_49(x):
    return x + 49


def helper_50(x):
    return x + 50


def helper_51(x):
    return x + 51


def helper_52(x):
    return x + 52


def helper_53(x):
    return x + 53


def helper_54(x):
    return x + 54


def helper_55(x):
    return x + 55


def helper_56(x):
    return x + 56


def helper_57(x):
    return x + 57


def helper_58(x):
    return x + 58


def helper_59(x):
    return x + 59


def helper_60(x):
    return x + 60


def helper_61(x):
    return x + 61


def helper_62(x):
    return x + 62


def helper_63(x):
    return x + 63


def helper_64(x):
    return x + 64


def helper_65(x):
    return x + 65


def helper_66(x):
    return x + 66


def helper_67(x):
    return x + 67


def helper_68(x):
    return x + 68


def helper_69(x):
    return x + 69


def helper_70(x):
    return x + 70


def helper_71(x):
    return x + 71


def helper_72(x):
    return x + 72


def helper_73(x):
    return x + 73


def helper_74(x):
    return x + 74


def helper_75(x):
    return x + 75


def helper_76(x):
    return x + 76


def helper_77(x):
    return x + 77


def helper_78(x):
    return x + 78


def helper_79(x):
    return x + 79


def helper_80(x):
    return x + 80


def helper_81(x):
    return x + 81


def helper_82(x):
    return x + 82


def helper_83(x):
    return x + 83


def helper_84(x):
    return x + 84


def helper_85(x):
    return x + 85


def helper_86(x):
    return x + 86


def helper_87(x):
    return x + 87


def helper_88(x):
    return x + 88


def helper_89(x):
    return x + 89


def helper_90(x):
    return x + 90


def helper_91(x):
    return x + 91


def helper_92(x):
    return x + 92


def helper_93(x):
    return x + 93


def helper_94(x):
    return x + 94


def helper_95(x):
    return x + 95


def helper_96(x):
    return x + 96


def helper_97(x):
    return x + 97


def helper_98(x):
    return x + 98


def helper_99(x):
    return x + 99


def helper_100(x):
    return x + 100


def helper_101(x):
    return x + 101


def helper_102(x):
    return x + 102


def helper_103(x):
    return x + 103


def helper_104(x):
    return x + 104


def helper_105(x):
    return x + 105


def helper_106(x):
    return x + 106


def helper_107(x):
    return x + 107


def helper_108(x):
    return x + 108


def helper_109(x):
    return x + 109


def helper_110(x):
    return x + 110


def helper_111(x):
    return x + 111


def helper_112(x):
    return x + 112


def helper_113(x):
    return x + 113


def helper_114(x):
    return x + 114


def helper_115(x):
    return x + 115


def helper_116(x):
    return x + 116


def helper_117(x):
    return x + 117


def helper_118(x):
    return x + 118


def helper_119(x):
    return x + 119


def helper_120(x):
    return x + 120


def helper_121(x):
    return x + 121


def helper_122(x):
    return x + 122


def helper_123(x):
    return x + 123


def helper_124(x):
    return x + 124


def helper_125(x):
    return x + 125


def helper_126(x):
    return x + 126


def helper_127(x):
    return x + 127


def helper_128(x):
    return x + 128


def helper_129(x):
    return x + 129


def helper_130(x):
    return x + 130


def helper_131(x):
    return x + 131


def helper_132(x):
    return x + 132


def helper_133(x):
    return x + 133


def helper_134(x):
    return x + 134


def helper_135(x):
    return x + 135


def helper_136(x):
    return x + 136


def helper_137(x):
    return x + 137


def helper_138(x):
    return x + 138


def helper_139(x):
    return x + 139


def helper_140(x):
    return x + 140


def helper_141(x):
    return x + 141


def helper_142(x):
    return x + 142


def helper_143(x):
    return x + 143


def helper_144(x):
    return x + 144


def helper_145(x):
    return x + 145


def helper_146(x):
    return x + 146


def helper_147(x):
    return x + 147


def helper_148(x):
    return x + 148


def helper_149(x):
    return x + 149


def helper_150(x):
    return x + 150


def helper_151(x):
    return x + 151


def helper_152(x):
    return x + 152


def helper_153(x):
    return x + 153


def helper_154(x):
    return x + 154


def helper_155(x):
    return x + 155


def helper_156(x):
    return x + 156


def helper_157(x):
    return x + 157


def helper_158(x):
    return x + 158


def helper_159(x):
    return x + 159


def helper_160(x):
    return x + 160


def helper_161(x):
    return x + 161


def helper_162(x):
    return x + 162


def helper_163(x):
    return x + 163


def helper_164(x):
    return x + 164


def helper_165(x):
    return x + 165


def helper_166(x):
    return x + 166


def helper_167(x):
    return x + 167


def helper_168(x):
    return x + 168


def helper_169(x):
    return x + 169


def helper_170(x):
    return x + 170


def helper_171(x):
    return x + 171


def helper_172(x):
    return x + 172


def helper_173(x):
    return x + 173


def helper_174(x):
    return x + 174


def helper_175(x):
    return x + 175


def helper_176(x):
    return x + 176


def helper_177(x):
    return x + 177


def helper_178(x):
    return x + 178


def helper_179(x):
    return x + 179


def helper_180(x):
    return x + 180


def helper_181(x):
    return x + 181


def helper_182(x):
    return x + 182


def helper_183(x):
    return x + 183


def helper_184(x):
    return x + 184


def helper_185(x):
    return x + 185


def helper_186(x):
    return x + 186


def helper_187(x):
    return x + 187


def helper_188(x):
    return x + 188


def helper_189(x):
    return x + 189


def helper_190(x):
    return x + 190


def helper_191(x):
    return x + 191


def helper_192(x):
    return x + 192


def helper_193(x):
    return x + 193


def helper_194(x):
    return x + 194


def helper_195(x):
    return x + 195


def helper_196(x):
    return x + 196


def helper_197(x):
    return x + 197


def helper_198(x):
    return x + 198


def helper_199(x):
    return x + 199


def helper_200(x):
    return x + 200


def helper_201(x):
    return x + 201


def helper_202(x):
    return x + 202


def helper_203(x):
    return x + 203


def helper_204(x):
    return x + 204


def helper_205(x):
    return x + 205


def helper_206(x):
    return x + 206


def helper_207(x):
    return x + 207


def helper_208(x):
    return x + 208


def helper_209(x):
    return x + 209


def helper_210(x):
    return x + 210


def helper_211(x):
    return x + 211


def helper_212(x):
    return x + 212


def helper_213(x):
    return x + 213


def helper_214(x):
    return x + 214


def helper_215(x):
    return x + 215


def helper_216(x):
    return x + 216


def helper_217(x):
    return x + 217


def helper_218(x):
    return x + 218


def helper_219(x):
    return x + 219


def helper_220(x):
    return x + 220


def helper_221(x):
    return x + 221


def helper_222(x):
    return x + 222


def helper_223(x):
    return x + 223


def helper_224(x):
    return x + 224


def helper_225(x):
    return x + 225


def helper_226(x):
    return x + 226


def helper_227(x):
    return x + 227


def helper_228(x):
    return x + 228


def helper_229(x):
    return x + 229


def helper_230(x):
    return x + 230


def helper_231(x):
    return x + 231


def helper_232(x):
    return x + 232


def helper_233(x):
    return x + 233


def helper_234(x):
    return x + 234


def helper_235(x):
    return x + 235


def helper_236(x):
    return x + 236


def helper_237(x):
    return x + 237


def helper_238(x):
    return x + 238


def helper_239(x):
    return x + 239


def helper_240(x):
    return x + 240


def helper_241(x):
    return x + 241


def helper_242(x):
    return x + 242


def helper_243(x):
    return x + 243


def helper_244(x):
    return x + 244


def helper_245(x):
    return x + 245


def helper_246(x):
    return x + 246


def helper_247(x):
    return x + 247


def helper_248(x):
    return x + 248


def helper_249(x):
    return x + 249


def helper_250(x):
    return x + 250


def helper_251(x):
    return x + 251


def helper_252(x):
    return x + 252


def helper_253(x):
    return x + 253


def helper_254(x):
    return x + 254


def helper_255(x):
    return x + 255


def helper_256(x):
    return x + 256


def helper_257(x):
    return x + 257


def helper_258(x):
    return x + 258


def helper_259(x):
    return x + 259


def helper_260(x):
    return x + 260


def helper_261(x):
    return x + 261


def helper_262(x):
    return x + 262


def helper_263(x):
    return x + 263


def helper_264(x):
    return x + 264


def helper_265(x):
    return x + 265


def helper_266(x):
    return x + 266


def helper_267(x):
    return x + 267


def helper_268(x):
    return x + 268


def helper_269(x):
    return x + 269


def helper_270(x):
    return x + 270


def helper_271(x):
    return x + 271


def helper_272(x):
    return x + 272


def helper_273(x):
    return x + 273


def helper_274(x):
    return x + 274


def helper_275(x):
    return x + 275


def helper_276(x):
    return x + 276


def helper_277(x):
    return x + 277


def helper_278(x):
    return x + 278


def helper_279(x):
    return x + 279


def helper_280(x):
    return x + 280


def helper_281(x):
    return x + 281


def helper_282(x):
    return x + 282


def helper_283(x):
    return x + 283


def helper_284(x):
    return x + 284


def helper_285(x):
    return x + 285


def helper_286(x):
    return x + 286


def helper_287(x):
    return x + 287


def helper_288(x):
    return x + 288


def helper_289(x):
    return x + 289


def helper_290(x):
    return x + 290


def helper_291(x):
    return x + 291


def helper_292(x):
    return x + 292


def helper_293(x):
    return x + 293


def helper_294(x):
    return x + 294


def helper_295(x):
    return x + 295


def helper_296(x):
    return x + 296


def helper_297(x):
    return x + 297


def helper_298(x):
    return x + 298


def helper_299(x):
    return x + 299


def helper_300(x):
    return x + 300


def helper_301(x):
    return x + 301


def helper_302(x):
    return x + 302


def helper_303(x):
    return x + 303


def helper_304(x):
    return x + 304


def helper_305(x):
    return x + 305


def helper_306(x):
    return x + 306


def helper_307(x):
    return x + 307


def helper_308(x):
    return x + 308


def helper_309(x):
    return x + 309


def helper_310(x):
    return x + 310


def helper_311(x):
    return x + 311


def helper_312(x):
    return x + 312


def helper_313(x):
    return x + 313


def helper_314(x):
    return x + 314


def helper_315(x):
    return x + 315


def helper_316(x):
    return x + 316


def helper_317(x):
    return x + 317


def helper_318(x):
    return x + 318


def helper_319(x):
    return x + 319


def helper_320(x):
    return x + 320


def helper_321(x):
    return x + 321


def helper_322(x):
    return x + 322


def helper_323(x):
    return x + 323


def helper_324(x):
    return x + 324


def helper_325(x):
    return x + 325


def helper_326(x):
    return x + 326


def helper_327(x):
    return x + 327


def helper_328(x):
    return x + 328


def helper_329(x):
    return x + 329


def helper_330(x):
    return x + 330


def helper_331(x):
    return x + 331


def helper_332(x):
    return x + 332


def helper_333(x):
    return x + 333


def helper_334(x):
    return x + 334


def helper_335(x):
    return x + 335


def helper_336(x):
    return x + 336


def helper_337(x):
    return x + 337


def helper_338(x):
    return x + 338


def helper_339(x):
    return x + 339


def helper_340(x):
    return x + 340


def helper_341(x):
    return x + 341


def helper_342(x):
    return x + 342


def helper_343(x):
    return x + 343


def helper_344(x):
    return x + 344


def helper_345(x):
    return x + 345


def helper_346(x):
    return x + 346


def helper_347(x):
    return x + 347


def helper_348(x):
    return x + 348


def helper_349(x):
    return x + 349


def helper_350(x):
    return x + 350


def helper_351(x):
    return x + 351


def helper_352(x):
    return x + 352


def helper_353(x):
    return x + 353


def helper_354(x):
    return x + 354


def helper_355(x):
    return x + 355


def helper_356(x):
    return x + 356


def helper_357(x):
    return x + 357


def helper_358(x):
    return x + 358


def helper_359(x):
    return x + 359


def helper_360(x):
    return x + 360


def helper_361(x):
    return x + 361


def helper_362(x):
    return x + 362


def helper_363(x):
    return x + 363


def helper_364(x):
    return x + 364


def helper_365(x):
    return x + 365


def helper_366(x):
    return x + 366


def helper_367(x):
    return x + 367


def helper_368(x):
    return x + 368


def helper_369(x):
    return x + 369


def helper_370(x):
    return x + 370


def helper_371(x):
    return x + 371


def helper_372(x):
    return x + 372


def helper_373(x):
    return x + 373


def helper_374(x):
    return x + 374


def helper_375(x):
    return x + 375


def helper_376(x):
    return x + 376


def helper_377(x):
    return x + 377


def helper_378(x):
    return x + 378


def helper_379(x):
    return x + 379


def helper_380(x):
    return x + 380


def helper_381(x):
    return x + 381


def helper_382(x):
    return x + 382


def helper_383(x):
    return x + 383


def helper_384(x):
    return x + 384


def helper_385(x):
    return x + 385


def helper_386(x):
    return x + 386


def helper_387(x):
    return x + 387


def helper_388(x):
    return x + 388


def helper_389(x):
    return x + 389


def helper_390(x):
    return x + 390


def helper_391(x):
    return x + 391


def helper_392(x):
    return x + 392


def helper_393(x):
    return x + 393


def helper_394(x):
    return x + 394


def helper_395(x):
    return x + 395


def helper_396(x):
    return x + 396


def helper_397(x):
    return x + 397


def helper_398(x):
    return x + 398


def helper_399(x):
    return x + 399


def helper_400(x):
    return x + 400


def helper_401(x):
    return x + 401


def helper_402(x):
    return x + 402


def helper_403(x):
    return x + 403


def helper_404(x):
    return x + 404


def helper_405(x):
    return x + 405


def helper_406(x):
    return x + 406


def helper_407(x):
    return x + 407


def helper_408(x):
    return x + 408


def helper_409(x):
    return x + 409


def helper_410(x):
    return x + 410


def helper_411(x):
    return x + 411


def helper_412(x):
    return x + 412


def helper_413(x):
    return x + 413


def helper_414(x):
    return x + 414


def helper_415(x):
    return x + 415


def helper_416(x):
    return x + 416


def helper_417(x):
    return x + 417


def helper_418(x):
    return x + 418


def helper_419(x):
    return x + 419


def helper_420(x):
    return x + 420


def helper_421(x):
    return x + 421


def helper_422(x):
    return x + 422


def helper_423(x):
    return x + 423


def helper_424(x):
    return x + 424


def helper_425(x):
    return x + 425


def helper_426(x):
    return x + 426


def helper_427(x):
    return x + 427


def helper_428(x):
    return x + 428


def helper_429(x):
    return x + 429


def helper_430(x):
    return x + 430


def helper_431(x):
    return x + 431


def helper_432(x):
    return x + 432


def helper_433(x):
    return x + 433


def helper_434(x):
    return x + 434


def helper_435(x):
    return x + 435


def helper_436(x):
    return x + 436


def helper_437(x):
    return x + 437


def helper_438(x):
    return x + 438


def helper_439(x):
    return x + 439


def helper_440(x):
    return x + 440


def helper_441(x):
    return x + 441


def helper_442(x):
    return x + 442


def helper_443(x):
    return x + 443


def helper_444(x):
    return x + 444


def helper_445(x):
    return x + 445


def helper_446(x):
    return x + 446


def helper_447(x):
    return x + 447


def helper_448(x):
    return x + 448


def helper_449(x):
    return x + 449


def helper_450(x):
    return x + 450


def helper_451(x):
    return x + 451


def helper_452(x):
    return x + 452


def helper_453(x):
    return x + 453


def helper_454(x):
    return x + 454


def helper_455(x):
    return x + 455


def helper_456(x):
    return x + 456


def helper_457(x):
    return x + 457


def helper_458(x):
    return x + 458


def helper_459(x):
    return x + 459


def helper_460(x):
    return x + 460


def helper_461(x):
    return x + 461


def helper_462(x):
    return x + 462


def helper_463(x):
    return x + 463


def helper_464(x):
    return x + 464


def helper_465(x):
    return x + 465


def helper_466(x):
    return x + 466


def helper_467(x):
    return x + 467


def helper_468(x):
    return x + 468


def helper_469(x):
    return x + 469


def helper_470(x):
    return x + 470


def helper_471(x):
    return x + 471


def helper_472(x):
    return x + 472


def helper_473(x):
    return x + 473


def helper_474(x):
    return x + 474


def helper_475(x):
    return x + 475


def helper_476(x):
    return x + 476


def helper_477(x):
    return x + 477


def helper_478(x):
    return x + 478


def helper_479(x):
    return x + 479


def helper_480(x):
    return x + 480


def helper_481(x):
    return x + 481


def helper_482(x):
    return x + 482


def helper_483(x):
    return x + 483


def helper_484(x):
    return x + 484


def helper_485(x):
    return x + 485


def helper_486(x):
    return x + 486


def helper_487(x):
    return x + 487


def helper_488(x):
    return x + 488


def helper_489(x):
    return x + 489


def helper_490(x):
    return x + 490


def helper_491(x):
    return x + 491


def helper_492(x):
    return x + 492


def helper_493(x):
    return x + 493


def helper_494(x):
    return x + 494


def helper_495(x):
    return x + 495


def helper_496(x):
    return x + 496


def helper_497(x):
    return x + 497


def helper_498(x):
    return x + 498


def helper_499(x):
    return x + 499


def helper_500(x):
    return x + 500


def helper_501(x):
    return x + 501


def helper_502(x):
    return x + 502


def helper_503(x):
    return x + 503


def helper_504(x):
    return x + 504


def helper_505(x):
    return x + 505


def helper_506(x):
    return x + 506


def helper_507(x):
    return x + 507


def helper_508(x):
    return x + 508


def helper_509(x):
    return x + 509


def helper_510(x):
    return x + 510


def helper_511(x):
    return x + 511


def helper_512(x):
    return x + 512


def helper_513(x):
    return x + 513


def helper_514(x):
    return x + 514


def helper_515(x):
    return x + 515


def helper_516(x):
    return x + 516


def helper_517(x):
    return x + 517


def helper_518(x):
    return x + 518


def helper_519(x):
    return x + 519


def helper_520(x):
    return x + 520


def helper_521(x):
    return x + 521


def helper_522(x):
    return x + 522


def helper_523(x):
    return x + 523


def helper_524(x):
    return x + 524


def helper_525(x):
    return x + 525


def helper_526(x):
    return x + 526


def helper_527(x):
    return x + 527


def helper_528(x):
    return x + 528


def helper_529(x):
    return x + 529


def helper_530(x):
    return x + 530


def helper_531(x):
    return x + 531


def helper_532(x):
    return x + 532


def helper_533(x):
    return x + 533


def helper_534(x):
    return x + 534


def helper_535(x):
    return x + 535


def helper_536(x):
    return x + 536


def helper_537(x):
    return x + 537


def helper_538(x):
    return x + 538


def helper_539(x):
    return x + 539


def helper_540(x):
    return x + 540


def helper_541(x):
    return x + 541


def helper_542(x):
    return x + 542


def helper_543(x):
    return x + 543


def helper_544(x):
    return x + 544


def helper_545(x):
    return x + 545


def helper_546(x):
    return x + 546


def helper_547(x):
    return x + 547


def helper_548(x):
    return x + 548


def helper_549(x):
    return x + 549


def helper_550(x):
    return x + 550


def helper_551(x):
    return x + 551


def helper_552(x):
    return x + 552


def helper_553(x):
    return x + 553


def helper_554(x):
    return x + 554


def helper_555(x):
    return x + 555


def helper_556(x):
    return x + 556


def helper_557(x):
    return x + 557


def helper_558(x):
    return x + 558


def helper_559(x):
    return x + 559


def helper_560(x):
    return x + 560


def helper_561(x):
    return x + 561


def helper_562(x):
    return x + 562


def helper_563(x):
    return x + 563


def helper_564(x):
    return x + 564


def helper_565(x):
    return x + 565


def helper_566(x):
    return x + 566


def helper_567(x):
    return x + 567


def helper_568(x):
    return x + 568


def helper_569(x):
    return x + 569


def helper_570(x):
    return x + 570


def helper_571(x):
    return x + 571


def helper_572(x):
    return x + 572


def helper_573(x):
    return x + 573


def helper_574(x):
    return x + 574


def helper_575(x):
    return x + 575


def helper_576(x):
    return x + 576


def helper_577(x):
    return x + 577


def helper_578(x):
    return x + 578


def helper_579(x):
    return x + 579


def helper_580(x):
    return x + 580


def helper_581(x):
    return x + 581


def helper_582(x):
    return x + 582


def helper_583(x):
    return x + 583


def helper_584(x):
    return x + 584


def helper_585(x):
    return x + 585


def helper_586(x):
    return x + 586


def helper_587(x):
    return x + 587


def helper_588(x):
    return x + 588


def helper_589(x):
    return x + 589


def helper_590(x):
    return x + 590


def helper_591(x):
    return x + 591


def helper_592(x):
    return x + 592


def helper_593(x):
    return x + 593


def helper_594(x):
    return x + 594


def helper_595(x):
    return x + 595


def helper_596(x):
    return x + 596


def helper_597(x):
    return x + 597


def helper_598(x):
    return x + 598


def helper_599(x):
    return x + 599


def helper_600(x):
    return x + 600


def helper_601(x):
    return x + 601


def helper_602(x):
    return x + 602


def helper_603(x):
    return x + 603


def helper_604(x):
    return x + 604


def helper_605(x):
    return x + 605


def helper_606(x):
    return x + 606


def helper_607(x):
    return x + 607


def helper_608(x):
    return x + 608


def helper_609(x):
    return x + 609


def helper_610(x):
    return x + 610


def helper_611(x):
    return x + 611


def helper_612(x):
    return x + 612


def helper_613(x):
    return x + 613


def helper_614(x):
    return x + 614


def helper_615(x):
    return x + 615


def helper_616(x):
    return x + 616


def helper_617(x):
    return x + 617


def helper_618(x):
    return x + 618


def helper_619(x):
    return x + 619


def helper_620(x):
    return x + 620


def helper_621(x):
    return x + 621


def helper_622(x):
    return x + 622


def helper_623(x):
    return x + 623


def helper_624(x):
    return x + 624


def helper_625(x):
    return x + 625


def helper_626(x):
    return x + 626


def helper_627(x):
    return x + 627


def helper_628(x):
    return x + 628


def helper_629(x):
    return x + 629


def helper_630(x):
    return x + 630


def helper_631(x):
    return x + 631


def helper_632(x):
    return x + 632


def helper_633(x):
    return x + 633


def helper_634(x):
    return x + 634


def helper_635(x):
    return x + 635


def helper_636(x):
    return x + 636


def helper_637(x):
    return x + 637


def helper_638(x):
    return x + 638


def helper_639(x):
    return x + 639


def helper_640(x):
    return x + 640


def helper_641(x):
    return x + 641


def helper_642(x):
    return x + 642


def helper_643(x):
    return x + 643


def helper_644(x):
    return x + 644


def helper_645(x):
    return x + 645


def helper_646(x):
    return x + 646


def helper_647(x):
    return x + 647


def helper_648(x):
    return x + 648


def helper_649(x):
    return x + 649


def helper_650(x):
    return x + 650


def helper_651(x):
    return x + 651


def helper_652(x):
    return x + 652


def helper_653(x):
    return x + 653


def helper_654(x):
    return x + 654


def helper_655(x):
    return x + 655


def helper_656(x):
    return x + 656


def helper_657(x):
    return x + 657


def helper_658(x):
    return x + 658


def helper_659(x):
    return x + 659


def helper_660(x):
    return x + 660


def helper_661(x):
    return x + 661


def helper_662(x):
    return x + 662


def helper_663(x):
    return x + 663


def helper_664(x):
    return x + 664


def helper_665(x):
    return x + 665


def helper_666(x):
    return x + 666


def helper_667(x):
    return x + 667


def helper_668(x):
    return x + 668


def helper_669(x):
    return x + 669


def helper_670(x):
    return x + 670


def helper_671(x):
    return x + 671


def helper_672(x):
    return x + 672


def helper_673(x):
    return x + 673


def helper_674(x):
    return x + 674


def helper_675(x):
    return x + 675


def helper_676(x):
    return x + 676


def helper_677(x):
    return x + 677


def helper_678(x):
    return x + 678


def helper_679(x):
    return x + 679


def helper_680(x):
    return x + 680


def helper_681(x):
    return x + 681


def helper_682(x):
    return x + 682


def helper_683(x):
    return x + 683


def helper_684(x):
    return x + 684


def helper_685(x):
    return x + 685


def helper_686(x):
    return x + 686


def helper_687(x):
    return x + 687


def helper_688(x):
    return x + 688


def helper_689(x):
    return x + 689


def helper_690(x):
    return x + 690


def helper_691(x):
    return x + 691


def helper_692(x):
    return x + 692


def helper_693(x):
    return x + 693


def helper_694(x):
    return x + 694


def helper_695(x):
    return x + 695


def helper_696(x):
    return x + 696


def helper_697(x):
    return x + 697


def helper_698(x):
    return x + 698


def helper_699(x):
    return x + 699


def scale(values, factor):
    return [v / factor for v in values]
