package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** {@link SchemaEvolution} follows Python's spark/schema.py evolve, rule for rule. */
public final class SchemaEvolutionTest {

    private static final ArrowType LONG = new ArrowType.Int(64, true);
    private static final ArrowType DOUBLE = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

    private SchemaEvolutionTest() {
    }

    private static Field field(String name, ArrowType type, boolean nullable) {
        return new Field(name, new FieldType(nullable, type, null), null);
    }

    private static Schema schema(Field... fields) {
        return new Schema(List.of(fields));
    }

    public static void testTheFirstWriteIsStoredAndAnEqualOneChangesNothing() {
        Schema first = schema(field("id", LONG, false));
        equal(first, SchemaEvolution.evolve(null, first, "w"), "stored");
        equal(null, SchemaEvolution.evolve(first, first, "w"), "unchanged");
        Schema utc = schema(field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"), true));
        Schema paris = schema(field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "Europe/Paris"), true));
        equal(null, SchemaEvolution.evolve(utc, paris, "w"), "a timestamp's zone does not count");
    }

    public static void testNewNullableColumnsAndRelaxedNullabilityAreStored() {
        Schema stored = schema(field("id", LONG, false), field("a", DOUBLE, true));
        Schema evolved = SchemaEvolution.evolve(stored, schema(field("a", DOUBLE, true),
                field("id", LONG, true), field("b", new ArrowType.Utf8(), true)), "w");
        equal(List.of("id", "a", "b"), evolved.getFields().stream().map(Field::getName).toList(),
                "the journal's order, then the new column");
        isTrue(evolved.getFields().get(0).isNullable(), "id relaxed to nullable");
    }

    public static void testEveryOffendingColumnIsNamedWithWhatToDo() {
        Schema stored = schema(field("id", LONG, false), field("amount", DOUBLE, true),
                field("gone", LONG, true));
        String message = raises(SchemaEvolution.SchemaMismatchException.class,
                () -> SchemaEvolution.evolve(stored, schema(field("id", LONG, false),
                        field("amount", new ArrowType.Utf8(), true), field("new", LONG, false)),
                        "a write into /j")).getMessage();
        contains(message, "a write into /j: the batch's schema does not match the journal's: "
                + "missing column(s) gone; column amount is string, the journal holds double; new "
                + "column(s) new are not nullable (older events have no value there; add them as "
                + "nullable). Journal schema: id int64 not null, amount double, gone int64; batch "
                + "schema: id int64 not null, amount string, new int64 not null. Write to a new "
                + "journal path, or cast the batch to the journal's schema");
    }
}
