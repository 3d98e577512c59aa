package dwarf

import "strconv"

// The names of DWARF's numbers: tags, attributes, the classes of values,
// offsets in .debug_info. They are the package's own, so that nothing but
// the tests reads debug/dwarf; each has debug/dwarf's name and value (the
// DWARF 5 names of DW_TAG_*, DW_AT_*), and String spells a value as
// debug/dwarf's does (TestNamesAsDebugDWARF compares every value).

// Offset is the offset of a DIE or unit in .debug_info.
type Offset uint32

// Tag is a DIE's tag (DW_TAG_*).
type Tag uint32

const (
	TagArrayType              Tag = 0x01
	TagClassType              Tag = 0x02
	TagEntryPoint             Tag = 0x03
	TagEnumerationType        Tag = 0x04
	TagFormalParameter        Tag = 0x05
	TagImportedDeclaration    Tag = 0x08
	TagLabel                  Tag = 0x0a
	TagLexDwarfBlock          Tag = 0x0b
	TagMember                 Tag = 0x0d
	TagPointerType            Tag = 0x0f
	TagReferenceType          Tag = 0x10
	TagCompileUnit            Tag = 0x11
	TagStringType             Tag = 0x12
	TagStructType             Tag = 0x13
	TagSubroutineType         Tag = 0x15
	TagTypedef                Tag = 0x16
	TagUnionType              Tag = 0x17
	TagUnspecifiedParameters  Tag = 0x18
	TagVariant                Tag = 0x19
	TagCommonDwarfBlock       Tag = 0x1a
	TagCommonInclusion        Tag = 0x1b
	TagInheritance            Tag = 0x1c
	TagInlinedSubroutine      Tag = 0x1d
	TagModule                 Tag = 0x1e
	TagPtrToMemberType        Tag = 0x1f
	TagSetType                Tag = 0x20
	TagSubrangeType           Tag = 0x21
	TagWithStmt               Tag = 0x22
	TagAccessDeclaration      Tag = 0x23
	TagBaseType               Tag = 0x24
	TagCatchDwarfBlock        Tag = 0x25
	TagConstType              Tag = 0x26
	TagConstant               Tag = 0x27
	TagEnumerator             Tag = 0x28
	TagFileType               Tag = 0x29
	TagFriend                 Tag = 0x2a
	TagNamelist               Tag = 0x2b
	TagNamelistItem           Tag = 0x2c
	TagPackedType             Tag = 0x2d
	TagSubprogram             Tag = 0x2e
	TagTemplateTypeParameter  Tag = 0x2f
	TagTemplateValueParameter Tag = 0x30
	TagThrownType             Tag = 0x31
	TagTryDwarfBlock          Tag = 0x32
	TagVariantPart            Tag = 0x33
	TagVariable               Tag = 0x34
	TagVolatileType           Tag = 0x35
	TagDwarfProcedure         Tag = 0x36
	TagRestrictType           Tag = 0x37
	TagInterfaceType          Tag = 0x38
	TagNamespace              Tag = 0x39
	TagImportedModule         Tag = 0x3a
	TagUnspecifiedType        Tag = 0x3b
	TagPartialUnit            Tag = 0x3c
	TagImportedUnit           Tag = 0x3d
	TagMutableType            Tag = 0x3e
	TagCondition              Tag = 0x3f
	TagSharedType             Tag = 0x40
	TagTypeUnit               Tag = 0x41
	TagRvalueReferenceType    Tag = 0x42
	TagTemplateAlias          Tag = 0x43
	TagCoarrayType            Tag = 0x44
	TagGenericSubrange        Tag = 0x45
	TagDynamicType            Tag = 0x46
	TagAtomicType             Tag = 0x47
	TagCallSite               Tag = 0x48
	TagCallSiteParameter      Tag = 0x49
	TagSkeletonUnit           Tag = 0x4a
	TagImmutableType          Tag = 0x4b
)

var tagNames = map[Tag]string{
	TagArrayType:              "ArrayType",
	TagClassType:              "ClassType",
	TagEntryPoint:             "EntryPoint",
	TagEnumerationType:        "EnumerationType",
	TagFormalParameter:        "FormalParameter",
	TagImportedDeclaration:    "ImportedDeclaration",
	TagLabel:                  "Label",
	TagLexDwarfBlock:          "LexDwarfBlock",
	TagMember:                 "Member",
	TagPointerType:            "PointerType",
	TagReferenceType:          "ReferenceType",
	TagCompileUnit:            "CompileUnit",
	TagStringType:             "StringType",
	TagStructType:             "StructType",
	TagSubroutineType:         "SubroutineType",
	TagTypedef:                "Typedef",
	TagUnionType:              "UnionType",
	TagUnspecifiedParameters:  "UnspecifiedParameters",
	TagVariant:                "Variant",
	TagCommonDwarfBlock:       "CommonDwarfBlock",
	TagCommonInclusion:        "CommonInclusion",
	TagInheritance:            "Inheritance",
	TagInlinedSubroutine:      "InlinedSubroutine",
	TagModule:                 "Module",
	TagPtrToMemberType:        "PtrToMemberType",
	TagSetType:                "SetType",
	TagSubrangeType:           "SubrangeType",
	TagWithStmt:               "WithStmt",
	TagAccessDeclaration:      "AccessDeclaration",
	TagBaseType:               "BaseType",
	TagCatchDwarfBlock:        "CatchDwarfBlock",
	TagConstType:              "ConstType",
	TagConstant:               "Constant",
	TagEnumerator:             "Enumerator",
	TagFileType:               "FileType",
	TagFriend:                 "Friend",
	TagNamelist:               "Namelist",
	TagNamelistItem:           "NamelistItem",
	TagPackedType:             "PackedType",
	TagSubprogram:             "Subprogram",
	TagTemplateTypeParameter:  "TemplateTypeParameter",
	TagTemplateValueParameter: "TemplateValueParameter",
	TagThrownType:             "ThrownType",
	TagTryDwarfBlock:          "TryDwarfBlock",
	TagVariantPart:            "VariantPart",
	TagVariable:               "Variable",
	TagVolatileType:           "VolatileType",
	TagDwarfProcedure:         "DwarfProcedure",
	TagRestrictType:           "RestrictType",
	TagInterfaceType:          "InterfaceType",
	TagNamespace:              "Namespace",
	TagImportedModule:         "ImportedModule",
	TagUnspecifiedType:        "UnspecifiedType",
	TagPartialUnit:            "PartialUnit",
	TagImportedUnit:           "ImportedUnit",
	TagMutableType:            "MutableType",
	TagCondition:              "Condition",
	TagSharedType:             "SharedType",
	TagTypeUnit:               "TypeUnit",
	TagRvalueReferenceType:    "RvalueReferenceType",
	TagTemplateAlias:          "TemplateAlias",
	TagCoarrayType:            "CoarrayType",
	TagGenericSubrange:        "GenericSubrange",
	TagDynamicType:            "DynamicType",
	TagAtomicType:             "AtomicType",
	TagCallSite:               "CallSite",
	TagCallSiteParameter:      "CallSiteParameter",
	TagSkeletonUnit:           "SkeletonUnit",
	TagImmutableType:          "ImmutableType",
}

// Attr is an attribute of a DIE (DW_AT_*).
type Attr uint32

const (
	AttrSibling              Attr = 0x01
	AttrLocation             Attr = 0x02
	AttrName                 Attr = 0x03
	AttrOrdering             Attr = 0x09
	AttrByteSize             Attr = 0x0b
	AttrBitOffset            Attr = 0x0c
	AttrBitSize              Attr = 0x0d
	AttrStmtList             Attr = 0x10
	AttrLowpc                Attr = 0x11
	AttrHighpc               Attr = 0x12
	AttrLanguage             Attr = 0x13
	AttrDiscr                Attr = 0x15
	AttrDiscrValue           Attr = 0x16
	AttrVisibility           Attr = 0x17
	AttrImport               Attr = 0x18
	AttrStringLength         Attr = 0x19
	AttrCommonRef            Attr = 0x1a
	AttrCompDir              Attr = 0x1b
	AttrConstValue           Attr = 0x1c
	AttrContainingType       Attr = 0x1d
	AttrDefaultValue         Attr = 0x1e
	AttrInline               Attr = 0x20
	AttrIsOptional           Attr = 0x21
	AttrLowerBound           Attr = 0x22
	AttrProducer             Attr = 0x25
	AttrPrototyped           Attr = 0x27
	AttrReturnAddr           Attr = 0x2a
	AttrStartScope           Attr = 0x2c
	AttrStrideSize           Attr = 0x2e
	AttrUpperBound           Attr = 0x2f
	AttrAbstractOrigin       Attr = 0x31
	AttrAccessibility        Attr = 0x32
	AttrAddrClass            Attr = 0x33
	AttrArtificial           Attr = 0x34
	AttrBaseTypes            Attr = 0x35
	AttrCalling              Attr = 0x36
	AttrCount                Attr = 0x37
	AttrDataMemberLoc        Attr = 0x38
	AttrDeclColumn           Attr = 0x39
	AttrDeclFile             Attr = 0x3a
	AttrDeclLine             Attr = 0x3b
	AttrDeclaration          Attr = 0x3c
	AttrDiscrList            Attr = 0x3d
	AttrEncoding             Attr = 0x3e
	AttrExternal             Attr = 0x3f
	AttrFrameBase            Attr = 0x40
	AttrFriend               Attr = 0x41
	AttrIdentifierCase       Attr = 0x42
	AttrMacroInfo            Attr = 0x43
	AttrNamelistItem         Attr = 0x44
	AttrPriority             Attr = 0x45
	AttrSegment              Attr = 0x46
	AttrSpecification        Attr = 0x47
	AttrStaticLink           Attr = 0x48
	AttrType                 Attr = 0x49
	AttrUseLocation          Attr = 0x4a
	AttrVarParam             Attr = 0x4b
	AttrVirtuality           Attr = 0x4c
	AttrVtableElemLoc        Attr = 0x4d
	AttrAllocated            Attr = 0x4e
	AttrAssociated           Attr = 0x4f
	AttrDataLocation         Attr = 0x50
	AttrStride               Attr = 0x51
	AttrEntrypc              Attr = 0x52
	AttrUseUTF8              Attr = 0x53
	AttrExtension            Attr = 0x54
	AttrRanges               Attr = 0x55
	AttrTrampoline           Attr = 0x56
	AttrCallColumn           Attr = 0x57
	AttrCallFile             Attr = 0x58
	AttrCallLine             Attr = 0x59
	AttrDescription          Attr = 0x5a
	AttrBinaryScale          Attr = 0x5b
	AttrDecimalScale         Attr = 0x5c
	AttrSmall                Attr = 0x5d
	AttrDecimalSign          Attr = 0x5e
	AttrDigitCount           Attr = 0x5f
	AttrPictureString        Attr = 0x60
	AttrMutable              Attr = 0x61
	AttrThreadsScaled        Attr = 0x62
	AttrExplicit             Attr = 0x63
	AttrObjectPointer        Attr = 0x64
	AttrEndianity            Attr = 0x65
	AttrElemental            Attr = 0x66
	AttrPure                 Attr = 0x67
	AttrRecursive            Attr = 0x68
	AttrSignature            Attr = 0x69
	AttrMainSubprogram       Attr = 0x6a
	AttrDataBitOffset        Attr = 0x6b
	AttrConstExpr            Attr = 0x6c
	AttrEnumClass            Attr = 0x6d
	AttrLinkageName          Attr = 0x6e
	AttrStringLengthBitSize  Attr = 0x6f
	AttrStringLengthByteSize Attr = 0x70
	AttrRank                 Attr = 0x71
	AttrStrOffsetsBase       Attr = 0x72
	AttrAddrBase             Attr = 0x73
	AttrRnglistsBase         Attr = 0x74
	AttrDwoName              Attr = 0x76
	AttrReference            Attr = 0x77
	AttrRvalueReference      Attr = 0x78
	AttrMacros               Attr = 0x79
	AttrCallAllCalls         Attr = 0x7a
	AttrCallAllSourceCalls   Attr = 0x7b
	AttrCallAllTailCalls     Attr = 0x7c
	AttrCallReturnPC         Attr = 0x7d
	AttrCallValue            Attr = 0x7e
	AttrCallOrigin           Attr = 0x7f
	AttrCallParameter        Attr = 0x80
	AttrCallPC               Attr = 0x81
	AttrCallTailCall         Attr = 0x82
	AttrCallTarget           Attr = 0x83
	AttrCallTargetClobbered  Attr = 0x84
	AttrCallDataLocation     Attr = 0x85
	AttrCallDataValue        Attr = 0x86
	AttrNoreturn             Attr = 0x87
	AttrAlignment            Attr = 0x88
	AttrExportSymbols        Attr = 0x89
	AttrDeleted              Attr = 0x8a
	AttrDefaulted            Attr = 0x8b
	AttrLoclistsBase         Attr = 0x8c
)

var attrNames = map[Attr]string{
	AttrSibling:              "Sibling",
	AttrLocation:             "Location",
	AttrName:                 "Name",
	AttrOrdering:             "Ordering",
	AttrByteSize:             "ByteSize",
	AttrBitOffset:            "BitOffset",
	AttrBitSize:              "BitSize",
	AttrStmtList:             "StmtList",
	AttrLowpc:                "Lowpc",
	AttrHighpc:               "Highpc",
	AttrLanguage:             "Language",
	AttrDiscr:                "Discr",
	AttrDiscrValue:           "DiscrValue",
	AttrVisibility:           "Visibility",
	AttrImport:               "Import",
	AttrStringLength:         "StringLength",
	AttrCommonRef:            "CommonRef",
	AttrCompDir:              "CompDir",
	AttrConstValue:           "ConstValue",
	AttrContainingType:       "ContainingType",
	AttrDefaultValue:         "DefaultValue",
	AttrInline:               "Inline",
	AttrIsOptional:           "IsOptional",
	AttrLowerBound:           "LowerBound",
	AttrProducer:             "Producer",
	AttrPrototyped:           "Prototyped",
	AttrReturnAddr:           "ReturnAddr",
	AttrStartScope:           "StartScope",
	AttrStrideSize:           "StrideSize",
	AttrUpperBound:           "UpperBound",
	AttrAbstractOrigin:       "AbstractOrigin",
	AttrAccessibility:        "Accessibility",
	AttrAddrClass:            "AddrClass",
	AttrArtificial:           "Artificial",
	AttrBaseTypes:            "BaseTypes",
	AttrCalling:              "Calling",
	AttrCount:                "Count",
	AttrDataMemberLoc:        "DataMemberLoc",
	AttrDeclColumn:           "DeclColumn",
	AttrDeclFile:             "DeclFile",
	AttrDeclLine:             "DeclLine",
	AttrDeclaration:          "Declaration",
	AttrDiscrList:            "DiscrList",
	AttrEncoding:             "Encoding",
	AttrExternal:             "External",
	AttrFrameBase:            "FrameBase",
	AttrFriend:               "Friend",
	AttrIdentifierCase:       "IdentifierCase",
	AttrMacroInfo:            "MacroInfo",
	AttrNamelistItem:         "NamelistItem",
	AttrPriority:             "Priority",
	AttrSegment:              "Segment",
	AttrSpecification:        "Specification",
	AttrStaticLink:           "StaticLink",
	AttrType:                 "Type",
	AttrUseLocation:          "UseLocation",
	AttrVarParam:             "VarParam",
	AttrVirtuality:           "Virtuality",
	AttrVtableElemLoc:        "VtableElemLoc",
	AttrAllocated:            "Allocated",
	AttrAssociated:           "Associated",
	AttrDataLocation:         "DataLocation",
	AttrStride:               "Stride",
	AttrEntrypc:              "Entrypc",
	AttrUseUTF8:              "UseUTF8",
	AttrExtension:            "Extension",
	AttrRanges:               "Ranges",
	AttrTrampoline:           "Trampoline",
	AttrCallColumn:           "CallColumn",
	AttrCallFile:             "CallFile",
	AttrCallLine:             "CallLine",
	AttrDescription:          "Description",
	AttrBinaryScale:          "BinaryScale",
	AttrDecimalScale:         "DecimalScale",
	AttrSmall:                "Small",
	AttrDecimalSign:          "DecimalSign",
	AttrDigitCount:           "DigitCount",
	AttrPictureString:        "PictureString",
	AttrMutable:              "Mutable",
	AttrThreadsScaled:        "ThreadsScaled",
	AttrExplicit:             "Explicit",
	AttrObjectPointer:        "ObjectPointer",
	AttrEndianity:            "Endianity",
	AttrElemental:            "Elemental",
	AttrPure:                 "Pure",
	AttrRecursive:            "Recursive",
	AttrSignature:            "Signature",
	AttrMainSubprogram:       "MainSubprogram",
	AttrDataBitOffset:        "DataBitOffset",
	AttrConstExpr:            "ConstExpr",
	AttrEnumClass:            "EnumClass",
	AttrLinkageName:          "LinkageName",
	AttrStringLengthBitSize:  "StringLengthBitSize",
	AttrStringLengthByteSize: "StringLengthByteSize",
	AttrRank:                 "Rank",
	AttrStrOffsetsBase:       "StrOffsetsBase",
	AttrAddrBase:             "AddrBase",
	AttrRnglistsBase:         "RnglistsBase",
	AttrDwoName:              "DwoName",
	AttrReference:            "Reference",
	AttrRvalueReference:      "RvalueReference",
	AttrMacros:               "Macros",
	AttrCallAllCalls:         "CallAllCalls",
	AttrCallAllSourceCalls:   "CallAllSourceCalls",
	AttrCallAllTailCalls:     "CallAllTailCalls",
	AttrCallReturnPC:         "CallReturnPC",
	AttrCallValue:            "CallValue",
	AttrCallOrigin:           "CallOrigin",
	AttrCallParameter:        "CallParameter",
	AttrCallPC:               "CallPC",
	AttrCallTailCall:         "CallTailCall",
	AttrCallTarget:           "CallTarget",
	AttrCallTargetClobbered:  "CallTargetClobbered",
	AttrCallDataLocation:     "CallDataLocation",
	AttrCallDataValue:        "CallDataValue",
	AttrNoreturn:             "Noreturn",
	AttrAlignment:            "Alignment",
	AttrExportSymbols:        "ExportSymbols",
	AttrDeleted:              "Deleted",
	AttrDefaulted:            "Defaulted",
	AttrLoclistsBase:         "LoclistsBase",
}

// Class is the class of an attribute's value: what its form says it
// holds (DWARF 5 section 7.5.5), as debug/dwarf classes it.
type Class int

const (
	ClassUnknown       Class = 0
	ClassAddress       Class = 1
	ClassBlock         Class = 2
	ClassConstant      Class = 3
	ClassExprLoc       Class = 4
	ClassFlag          Class = 5
	ClassLinePtr       Class = 6
	ClassLocListPtr    Class = 7
	ClassMacPtr        Class = 8
	ClassRangeListPtr  Class = 9
	ClassReference     Class = 10
	ClassReferenceSig  Class = 11
	ClassString        Class = 12
	ClassReferenceAlt  Class = 13
	ClassStringAlt     Class = 14
	ClassAddrPtr       Class = 15
	ClassLocList       Class = 16
	ClassRngList       Class = 17
	ClassRngListsPtr   Class = 18
	ClassStrOffsetsPtr Class = 19
)

var classNames = map[Class]string{
	ClassUnknown:       "ClassUnknown",
	ClassAddress:       "ClassAddress",
	ClassBlock:         "ClassBlock",
	ClassConstant:      "ClassConstant",
	ClassExprLoc:       "ClassExprLoc",
	ClassFlag:          "ClassFlag",
	ClassLinePtr:       "ClassLinePtr",
	ClassLocListPtr:    "ClassLocListPtr",
	ClassMacPtr:        "ClassMacPtr",
	ClassRangeListPtr:  "ClassRangeListPtr",
	ClassReference:     "ClassReference",
	ClassReferenceSig:  "ClassReferenceSig",
	ClassString:        "ClassString",
	ClassReferenceAlt:  "ClassReferenceAlt",
	ClassStringAlt:     "ClassStringAlt",
	ClassAddrPtr:       "ClassAddrPtr",
	ClassLocList:       "ClassLocList",
	ClassRngList:       "ClassRngList",
	ClassRngListsPtr:   "ClassRngListsPtr",
	ClassStrOffsetsPtr: "ClassStrOffsetsPtr",
}

func (t Tag) String() string {
	if s, ok := tagNames[t]; ok {
		return s
	}
	return "Tag(" + strconv.FormatInt(int64(t), 10) + ")"
}

func (a Attr) String() string {
	if s, ok := attrNames[a]; ok {
		return s
	}
	return "Attr(" + strconv.FormatInt(int64(a), 10) + ")"
}

func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return "Class(" + strconv.FormatInt(int64(c), 10) + ")"
}
