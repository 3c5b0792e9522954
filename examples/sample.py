"""A small inventory module used by `quickfill demo` to type through."""

from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 0
    tags: list[str] = field(default_factory=list)

    def total_value(self) -> float:
        return self.price * self.quantity


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        if item.name in self.items:
            self.items[item.name].quantity += item.quantity
        else:
            self.items[item.name] = item

    def remove(self, name: str, quantity: int = 1) -> bool:
        item = self.items.get(name)
        if item is None or item.quantity < quantity:
            return False
        item.quantity -= quantity
        if item.quantity == 0:
            del self.items[name]
        return True

    def total_value(self) -> float:
        return sum(item.total_value() for item in self.items.values())

    def tagged(self, tag: str) -> list[Item]:
        return [item for item in self.items.values() if tag in item.tags]


if __name__ == "__main__":
    inv = Inventory()
    inv.add(Item("apple", 0.5, 10, ["fruit"]))
    inv.add(Item("pear", 0.75, 4, ["fruit"]))
    inv.add(Item("hammer", 12.0, 1, ["tool"]))
    print(f"total: {inv.total_value():.2f}")
    print("fruit:", [i.name for i in inv.tagged("fruit")])
